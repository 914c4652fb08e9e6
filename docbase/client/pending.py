"""What a call inside a remote batch returns before the batch is sent, and its references.

Inside ``async with db.batch():`` a remote call is queued, not sent, so it cannot
return its answer yet. It returns a :class:`PendingDocument` (a dict) or a
:class:`PendingList` (a list) standing for the answer of request ``N`` of the batch.
Until the batch is sent, indexing one gives a :class:`Reference`, ``N.field``: written
into a later call's path (an id) it becomes ``{N.field}``, used as a value of a later
call's body it becomes ``{"$ref": "N.field"}``, which the server replaces with that
value of request N's answer (``docs/batch.md``). Once the batch answered, the pending
value holds the answer and is the plain dict or list the call returns outside a batch.
A reference belongs to its request's :class:`Slot` in its batch: once the batch was
sent, or the request dropped (an inner block that raised), it can no longer be written
into a request, where ``N`` would name another request.
"""

from __future__ import annotations

from typing import Any

from docbase.core.errors import InvalidQuery

__all__ = ["PendingDocument", "PendingList", "Reference", "Slot", "encode_references"]


class Slot:
    """Request ``index`` of the batch ``owner``: whether it is still to be sent."""

    __slots__ = ("index", "open", "owner")

    def __init__(self, owner: object, index: int) -> None:
        self.owner = owner
        self.index = index
        self.open = True


class Reference:
    """A value of the answer of the request in ``slot`` at ``path``, not received yet."""

    __slots__ = ("path", "slot")

    def __init__(self, slot: Slot, path: tuple[str, ...]) -> None:
        self.slot = slot
        self.path = path

    def __getitem__(self, key: str | int) -> Reference:
        """The reference to a field (or an element) of this value."""
        return Reference(self.slot, (*self.path, str(key)))

    def usable_in(self, owner: object) -> Reference:
        """Return the reference if a request of the batch ``owner`` may hold it.

        Raises:
            InvalidQuery: it belongs to a batch sent, a request dropped, or another batch.

        """
        if self.slot.owner is not owner or not self.slot.open:
            raise InvalidQuery(f"{self!r} stands for a value of a batch already sent, of a "
                               "request dropped or of another batch")
        return self

    @property
    def name(self) -> str:
        """``N.field``, as the batch's references spell it."""
        return ".".join((str(self.slot.index), *self.path))

    def __str__(self) -> str:
        """``{N.field}``: the reference in a path (while its batch takes requests)."""
        return "{" + self.usable_in(self.slot.owner).name + "}"

    def __repr__(self) -> str:
        return f"Reference({self.name!r})"


def encode_references(value: object, owner: object) -> Any:
    """``msgspec``'s ``enc_hook`` for a body of batch ``owner``: ``{"$ref": "N.field"}``.

    Raises:
        InvalidQuery: a reference of another batch.
        TypeError: ``value`` is neither a reference nor a JSON value.

    """
    if isinstance(value, Reference):
        return {"$ref": value.usable_in(owner).name}
    raise TypeError(f"{type(value).__name__} is not a JSON value")


class _Pending:
    """What a pending answer holds before its batch is sent: the reference to it."""

    def __init__(self, slot: Slot, prefix: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.reference = Reference(slot, prefix)

    @property
    def sent(self) -> bool:
        """Whether the batch was sent: the container then holds the answer (if it succeeded)."""
        return not self.reference.slot.open


class PendingDocument(_Pending, dict[str, Any]):
    """The answer (an object) of request ``index`` of a batch: references until it is sent."""

    def __getitem__(self, key: str) -> Any:
        if not self.sent:
            return self.reference[key]
        return super().__getitem__(key)

    def fill(self, answer: Any) -> None:
        """Hold ``answer``, the call's result (once the batch was sent)."""
        self.update(answer)


class PendingList(_Pending, list[Any]):
    """The answer (an array) of request ``index`` of a batch: references until it is sent."""

    def __getitem__(self, key: Any) -> Any:
        if not self.sent and isinstance(key, int) and key >= 0:
            return self.reference[key]
        return super().__getitem__(key)

    def fill(self, answer: Any) -> None:
        """Hold ``answer``, the call's result (once the batch was sent)."""
        self.extend(answer)
