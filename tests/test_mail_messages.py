"""Reading ``POST /mail`` bodies and building the messages (no storage, no network)."""

from __future__ import annotations

import pytest

from docbase.core.errors import InvalidQuery, MailDeliveryError, PayloadTooLarge, ValidationFailed
from docbase.core.mail import compose, html_to_text, parse_mail_body
from docbase.core.ports import MailMessage

MESSAGE = {"to": "ann@example.com", "subject": "Hi", "html": "<p>x</p>"}


@pytest.mark.parametrize(("html", "text"), [
    ("<p>Hello <b>world</b>,\n   how   are you?</p>", "Hello world, how are you?"),
    ("<h1>Order</h1><p>Ready</p>", "Order\n\nReady"),
    ("<ul><li>one</li><li>two</li></ul>after", "- one\n- two\n\nafter"),
    ("line<br>break &amp; more", "line\nbreak & more"),
    ("<p>See <a href='https://x.test/o/7'>your order</a>.</p>",
     "See your order (https://x.test/o/7)."),
    ("<a href='https://x.test'>https://x.test</a>", "https://x.test"),
    ("<head><title>T</title><style>p {}</style></head><script>x()</script><p>kept</p>",
     "kept"),
    ("<pre>a\n  b</pre>", "a\n  b"),
    ("<table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table>", "x y\nz"),
    ("<img alt='logo'> unclosed <b>tags", "logo unclosed tags"),
])
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_one_message_or_an_array_within_the_limit() -> None:
    [one] = parse_mail_body({**MESSAGE, "to": ["Ann@Example.com"], "text": "t"}, limit=2)
    assert (one.to, one.text) == (("Ann@example.com",), "t")
    assert len(parse_mail_body([MESSAGE, MESSAGE], limit=2)) == 2
    with pytest.raises(PayloadTooLarge, match="at most 2 messages"):
        parse_mail_body([MESSAGE] * 3, limit=2)


@pytest.mark.parametrize("body", [[], "text", 3, None])
def test_a_body_must_be_a_message_or_an_array(body: object) -> None:
    with pytest.raises(InvalidQuery):
        parse_mail_body(body, limit=5)  # type: ignore[arg-type]


def test_every_problem_of_every_message_is_listed() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_mail_body([MESSAGE, {"to": [], "html": 3, "cc": "x"}, "nope",
                         {**MESSAGE, "to": ["a@example.com", "bad"], "sendername": "A\u2028B"}],
                        limit=10)
    fields = {f.field: f.message for f in caught.value.fields}
    assert sorted(fields) == ["1.cc", "1.html", "1.subject", "1.to", "2", "3.sendername",
                              "3.to"]
    assert fields["3.to"][0].startswith("'bad': ")
    assert caught.value.message == "3 of 4 message(s) cannot be sent; nothing was sent"


def test_compose_refuses_what_cannot_be_a_header() -> None:
    base = MailMessage(to=("ann@example.com",), subject="Hi", html="x",
                       sender="shop@example.com")
    for broken in (MailMessage(to=("a@example.com\r\nBcc: x@example.com",), subject="Hi",
                               html="x", sender="shop@example.com"),
                   MailMessage(to=("ann@example.com",), subject="Hi\nBcc: x@example.com",
                               html="x", sender="shop@example.com"),
                   MailMessage(to=("ann@example.com",), subject="Hi", html="x",
                               sender="Shop <shop@example.com>")):
        with pytest.raises(MailDeliveryError):
            compose(broken)
    built = compose(base)
    assert built.get_content_type() == "multipart/alternative"
    assert built["Message-ID"].endswith("@example.com>")
