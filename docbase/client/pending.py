"""What a call inside a remote batch returns before the batch is sent, and its references.

Inside ``async with db.batch():`` a remote call is queued, not sent, so it cannot
return its answer yet. It returns a :class:`PendingDocument` (a dict) or a
:class:`PendingList` (a list) standing for the answer of request ``N`` of the batch.
Until the batch is sent, indexing one gives a :class:`Reference`, ``N.field``: written
into a later call's path (an id) it becomes ``{N.field}``, used as a value of a later
call's body it becomes ``{"$ref": "N.field"}``, which the server replaces with that
value of request N's answer (``docs/batch.md``). Once the batch answered, the pending
value holds the answer and is the plain dict or list the call returns outside a batch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PendingDocument", "PendingList", "Reference", "encode_references"]


class Reference:
    """A value of request ``index``'s answer at ``path``, not received yet."""

    __slots__ = ("index", "path")

    def __init__(self, index: int, path: tuple[str, ...]) -> None:
        self.index = index
        self.path = path

    def __getitem__(self, key: str | int) -> Reference:
        """The reference to a field (or an element) of this value."""
        return Reference(self.index, (*self.path, str(key)))

    @property
    def name(self) -> str:
        """``N.field``, as the batch's references spell it."""
        return ".".join((str(self.index), *self.path))

    def __str__(self) -> str:
        """``{N.field}``: the reference in a path."""
        return "{" + self.name + "}"

    def __repr__(self) -> str:
        return f"Reference({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


def encode_references(value: object) -> Any:
    """``msgspec``'s ``enc_hook``: a reference in a body is ``{"$ref": "N.field"}``.

    Raises:
        TypeError: ``value`` is neither a reference nor a JSON value.

    """
    if isinstance(value, Reference):
        return {"$ref": value.name}
    raise TypeError(f"{type(value).__name__} is not a JSON value")


class PendingDocument(dict[str, Any]):
    """The answer (an object) of request ``index`` of a batch: references until it is sent."""

    def __init__(self, index: int, prefix: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.reference = Reference(index, prefix)
        self.sent = False
        """Whether the batch answered: the dict then holds the answer."""

    def __getitem__(self, key: str) -> Any:
        if not self.sent:
            return self.reference[key]
        return super().__getitem__(key)

    def fill(self, answer: Any) -> None:
        """Hold ``answer``, the call's result, from now on."""
        self.update(answer)
        self.sent = True


class PendingList(list[Any]):
    """The answer (an array) of request ``index`` of a batch: references until it is sent."""

    def __init__(self, index: int, prefix: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.reference = Reference(index, prefix)
        self.sent = False
        """Whether the batch answered: the list then holds the answer."""

    def __getitem__(self, key: Any) -> Any:
        if not self.sent and isinstance(key, int) and key >= 0:
            return self.reference[key]
        return super().__getitem__(key)

    def fill(self, answer: Any) -> None:
        """Hold ``answer``, the call's result, from now on."""
        self.extend(answer)
        self.sent = True
