"""Reading the body of ``POST /mail`` into messages, refusing what cannot be sent.

A body is one message object or an array of them (at most ``limits.max_mail``). Each
message has ``to`` (an address or an array of addresses), ``subject`` and ``html``,
and optionally ``text``, ``sendername`` and ``company``. Addresses are checked with
``email-validator`` (syntax only, no DNS look-up); a line break in any value that
becomes a header (``to``, ``subject``, ``sendername``, ``company``) is refused, so no
request can add a header. Every problem of every message is reported at once, as a
:class:`~docbase.core.errors.ValidationFailed` whose fields are named ``to`` for a
single message and ``2.to`` for the third message of an array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from docbase.core.errors import FieldError, InvalidQuery, PayloadTooLarge, ValidationFailed
from docbase.core.plugins import lazy_module
from docbase.core.query import JSON

if TYPE_CHECKING:
    import email_validator
else:  # imported on the first address checked: most requests carry none
    email_validator = lazy_module("email_validator")

MAX_RECIPIENTS = 100
"""Most addresses one message may be sent to."""

_REQUIRED = ("to", "subject", "html")
_OPTIONAL = ("text", "sendername", "company")
_HEADERS = frozenset({"subject", "sendername", "company"})


class MailRequest(msgspec.Struct, frozen=True):
    """One message as a client asked for it, checked but not yet addressed from anyone."""

    to: tuple[str, ...]
    subject: str
    html: str
    text: str | None = None
    sendername: str = ""
    company: str = ""


def has_line_break(value: str) -> bool:
    """Tell whether ``value`` holds a line break (CR, LF or any other Unicode one)."""
    return "".join(value.splitlines()) != value


def check_address(address: str) -> str:
    """Return the normalised form of one recipient address.

    Raises:
        ValueError: it is not a deliverable-looking address; the message says why.

    """
    if has_line_break(address):
        raise ValueError("must not contain a line break")
    try:
        valid = email_validator.validate_email(address, check_deliverability=False)
    except email_validator.EmailNotValidError as exc:
        raise ValueError(str(exc)) from None
    return valid.ascii_email or valid.normalized  # IDNA domain; SMTPUTF8 only if need be


def _recipients(value: Any, problems: dict[str, list[str]]) -> tuple[str, ...]:
    addresses = [value] if isinstance(value, str) else value
    if not isinstance(addresses, list) or not addresses or \
            not all(isinstance(a, str) for a in addresses):
        problems["to"] = ["must be an address or a non-empty array of addresses"]
        return ()
    if len(addresses) > MAX_RECIPIENTS:
        problems["to"] = [f"at most {MAX_RECIPIENTS} addresses per message"]
        return ()
    normalised: list[str] = []
    for address in addresses:
        try:
            normalised.append(check_address(address))
        except ValueError as exc:
            problems.setdefault("to", []).append(f"{address!r}: {exc}")
    return tuple(normalised)


def _message(item: JSON) -> tuple[MailRequest | None, dict[str, list[str]]]:
    if not isinstance(item, dict):
        return None, {"": ["a message must be a JSON object"]}
    problems: dict[str, list[str]] = {}
    for name in item:
        if name not in _REQUIRED and name not in _OPTIONAL:
            problems[name] = ["unknown field: a message has " +
                              ", ".join((*_REQUIRED, *_OPTIONAL))]
    for name in _REQUIRED:
        if item.get(name) is None:
            problems[name] = ["is required"]
    for name in (*_REQUIRED[1:], *_OPTIONAL):
        value = item.get(name)
        if value is None or name in problems:
            continue
        if not isinstance(value, str):
            problems[name] = ["must be a string"]
        elif name in _HEADERS and has_line_break(value):
            problems[name] = ["must not contain a line break"]
    to = _recipients(item["to"], problems) if "to" not in problems else ()
    if problems:
        return None, problems
    text = item.get("text")
    return MailRequest(to, str(item["subject"]), str(item["html"]),
                       text=None if text is None else str(text),
                       sendername=str(item.get("sendername") or ""),
                       company=str(item.get("company") or "")), problems


def parse_mail_body(body: JSON, *, limit: int) -> list[MailRequest]:
    """Read a ``POST /mail`` body: one message or an array of at most ``limit``.

    Raises:
        InvalidQuery: the body is neither an object nor a non-empty array.
        PayloadTooLarge: the array holds more than ``limit`` messages.
        ValidationFailed: a message is malformed: a field missing, unknown or of the
            wrong type, an invalid address, a line break in a header field.

    """
    if isinstance(body, dict):
        items, indexed = [body], False
    elif isinstance(body, list) and body:
        items, indexed = body, True
    else:
        raise InvalidQuery("the body must be a message object or a non-empty array of them")
    if len(items) > limit:
        raise PayloadTooLarge(f"a mail request may hold at most {limit} messages "
                              f"(limits.max_mail); this one holds {len(items)}")
    requests: list[MailRequest] = []
    errors: list[FieldError] = []
    refused = 0
    for index, item in enumerate(items):
        request, problems = _message(item)
        refused += bool(problems)
        for name, messages in problems.items():
            field = ".".join(part for part in (str(index) if indexed else "", name) if part)
            errors.append(FieldError(field or "body", tuple(messages)))
        if request is not None:
            requests.append(request)
    if errors:
        raise ValidationFailed(f"{refused} of {len(items)} message(s) cannot be sent; "
                               "nothing was sent", errors)
    return requests
