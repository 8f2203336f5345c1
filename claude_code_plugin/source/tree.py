"""From the ``parentUuid`` tree of a file to the order and shape of the ASF tree.

Claude Code's tree is not the conversation's shape. Parallel tool results hang off the
``tool_use`` line that asked for them, hooks' ``progress`` lines hang off whatever was current,
a response is written as one line per content block, and tools run while the response is
still streaming, so a result can be written (and chained) between two lines of its own
response. Only a user going back and typing again (a rewind) makes a real branch.

The rule, line by line in file order (file order is write order):

* a line continues the *chain* (a run of lines that is one branch) holding its parent when
  no turn was written on the chain after its parent (an assistant line, or a user line that is
  not only tool results: parallel results and hook ``progress`` or bookkeeping lines may have
  been), or when it is a recording artifact: a line that is not a message
  (``progress``, ``system``, ``attachment``, anything unknown), tool results all answering
  calls still open on the chain, or a further line of the response the chain is in. Anything
  else (a typed prompt, or a result for a call already answered) starts a new chain: a
  branch;
* a message line without a parent (or whose parent is not in the file, or is written after
  it) starts a new root, unless nothing but bookkeeping was written before; any other
  line without a place (bookkeeping lines have no uuid; unreadable lines) continues the chain
  the conversation was last seen on;
* a ``compact_boundary`` hangs from its ``logicalParentUuid`` (the conversation it compacts;
  the ASF compaction entry cuts the context there).

Within a chain, the results of a response's calls are moved after its last line, where its
``response`` entry goes (the model got them after the whole response). A branch hangs after
the response entry of the line it branches from. The ASF file is written depth first, the
branch holding the main conversation's last message last, so the file's last line is on the
live branch. Each line keeps its own ``parentUuid`` in the output: the original tree is never
lost.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from attrs import define, field

from claude_code_plugin.source.index import FileIndex
from claude_code_plugin.source.table import Line, LineTable

__all__ = ["LINE", "LINK", "RESPONSE", "Links", "Plan", "plan_file"]

#: Node kinds: a source line, a response entry (one per group), a link to a child session.
LINE: Final = 0
RESPONSE: Final = 1
LINK: Final = 2


@define
class Plan:
    """The ASF tree of one file, in the order it is written.

    ``order`` lists node ids depth first; node ``n`` is of kind ``kinds[n]``, refers to
    ``refs[n]`` (a line's position, a group's id, a link's id) and hangs from ``parents[n]``
    (-1 for a root).
    """

    kinds: array[int] = field(factory=lambda: array("b"))
    refs: array[int] = field(factory=lambda: array("i"))
    parents: array[int] = field(factory=lambda: array("i"))
    order: array[int] = field(factory=lambda: array("i"))
    #: 1 for a node with several children: a branch point (:func:`_depth_first`).
    forks: bytearray = field(factory=bytearray)
    #: Response groups: positions of their lines, in chain order.
    groups: list[list[int]] = field(factory=list)
    #: Position of the main conversation's last message (-1: no message at all).
    main_line: int = -1
    #: Positions of lines whose parent is not in the file, is written after them, or is
    #: themselves; with the parent they name.
    missing: list[int] = field(factory=list)
    forward: list[int] = field(factory=list)
    #: Lines that start a branch (a real rewind or a replay), and roots holding messages.
    branches: list[int] = field(factory=list)
    roots: int = 0
    #: Positions of summaries paired with the boundary they open: summary -> boundary.
    compactions: dict[int, int] = field(factory=dict)

    def add(self, kind: int, ref: int, parent: int) -> int:
        self.kinds.append(kind)
        self.refs.append(ref)
        self.parents.append(parent)
        return len(self.kinds) - 1


@define
class _Chains:
    """Chains under construction (one branch each), in file order."""

    lines: list[array[int]] = field(factory=list)
    #: The line a chain branches from (-1 for a root chain).
    fork: list[int] = field(factory=list)
    #: The position of the chain's last *turn*: its last assistant line or user line that is
    #: not only tool results (-1: none yet). Results are written in whatever order their
    #: tools finish, so lines hanging from any of them continue the turn.
    last_turn: list[int] = field(factory=list)
    open_calls: list[set[str]] = field(factory=list)
    #: The message id of the response a chain is in (None after a prompt).
    response: list[str | None] = field(factory=list)
    has_message: list[bool] = field(factory=list)

    def new(self, fork: int) -> int:
        self.lines.append(array("i"))
        self.fork.append(fork)
        self.last_turn.append(-1)
        self.open_calls.append(set())
        self.response.append(None)
        self.has_message.append(False)
        return len(self.lines) - 1

    def append(self, chain: int, pos: int, line: Line) -> None:
        self.lines[chain].append(pos)
        if line.role is None:
            return
        if line.role == "assistant" or line.prompt:
            self.last_turn[chain] = pos
        self.has_message[chain] = True
        self.open_calls[chain].update(line.calls)
        self.open_calls[chain].difference_update(line.results)
        if line.role == "assistant":
            self.response[chain] = line.msg
        elif line.prompt:
            self.response[chain] = None

    def continues(self, chain: int, parent: int, line: Line) -> bool:
        """Whether ``line``, whose parent is on ``chain``, continues it rather than branch."""
        if parent >= self.last_turn[chain] or line.role is None:
            return True  # no turn since its parent (results at most), or not a message
        if line.role == "user":  # results for calls still open, with or without text after
            return bool(line.results) and all(r in self.open_calls[chain] for r in line.results)
        return line.msg is not None and line.msg == self.response[chain]


@define
class Links:
    """Where the links to child sessions go: after the response holding a call (by tool use
    id), after a compact boundary (by line position), or at the end of the main chain."""

    calls: dict[str, list[int]] = field(factory=dict)
    boundaries: dict[int, list[int]] = field(factory=dict)
    tail: list[int] = field(factory=list)


def _parent_of(pos: int, line: Line, index: FileIndex, plan: Plan) -> int:
    """The position of the line ``line`` hangs from, or -1 (recording why in ``plan``)."""
    if not line.boundary and line.parent_at >= 0:
        return line.parent_at
    wanted = line.logical if line.boundary else line.parent
    if wanted is None:
        return -1
    parent = index.by_uuid.get(wanted, -1)
    if parent < 0:
        if not line.boundary:
            plan.missing.append(pos)
        return -1
    if parent >= pos:
        plan.forward.append(pos)
        return -1
    return parent


def _assign(index: FileIndex, plan: Plan) -> tuple[_Chains, list[int]]:
    """Every line's chain, in file order (see the module docstring)."""
    lines = index.lines
    chains = _Chains()
    chain_of = [-1] * len(lines)
    active = -1
    for pos, line in enumerate(lines):
        if not line.transcript:
            chain = active if active >= 0 else chains.new(-1)
        else:
            parent = _parent_of(pos, line, index, plan)
            if parent < 0:
                preamble = active >= 0 and not chains.has_message[active]
                if line.role is not None and not preamble:
                    chain = chains.new(-1)
                else:
                    chain = active if active >= 0 else chains.new(-1)
            else:
                chain = chain_of[parent]
                if not chains.continues(chain, parent, line):
                    chain = chains.new(parent)
                    plan.branches.append(pos)
        chains.append(chain, pos, line)
        chain_of[pos] = chain
        # Lines without a place follow the conversation (before it: the last transcript line).
        message = line.role is not None and not line.sidechain
        if message or active < 0 or (line.transcript and not chains.has_message[active]):
            active = chain
    return chains, chain_of


def _groups(chain: Sequence[int], lines: LineTable, plan: Plan) -> dict[int, int]:
    """Split a chain's assistant lines into responses; line position -> group id."""
    group_of: dict[int, int] = {}
    current = -1
    for pos in chain:
        line = lines[pos]
        if line.role == "assistant":
            same = current >= 0 and line.msg is not None
            if not (same and lines[plan.groups[current][0]].msg == line.msg):
                plan.groups.append([])
                current = len(plan.groups) - 1
            plan.groups[current].append(pos)
            group_of[pos] = current
            if line.msg is None:
                current = -1
        elif line.role == "user" and line.prompt:
            current = -1
    return group_of


def _chain_nodes(
    chain: Sequence[int],
    lines: LineTable,
    plan: Plan,
    links: Links,
) -> Iterator[tuple[int, int]]:
    """A chain's nodes in writing order: results moved after their response, each response
    followed by its entry and the links of the sub-agents its calls spawned."""
    group_of = _groups(chain, lines, plan)
    last = {g: plan.groups[g][-1] for g in set(group_of.values())}
    calls: dict[int, set[str]] = {}
    for pos, g in group_of.items():
        calls.setdefault(g, set()).update(lines[pos].calls)
    deferred: dict[int, list[int]] = {}
    current = -1
    for pos in chain:
        line = lines[pos]
        if pos in group_of:
            current = group_of[pos]
        elif (
            line.role == "user"
            and current >= 0
            and last[current] != -1
            and any(r in calls[current] for r in line.results)
        ):
            deferred.setdefault(current, []).append(pos)
            continue
        yield LINE, pos
        if pos in group_of and last[group_of[pos]] == pos:
            g = group_of[pos]
            yield RESPONSE, g
            for member in plan.groups[g]:
                for call in lines[member].calls:
                    yield from ((LINK, link) for link in links.calls.pop(call, ()))
            yield from ((LINE, p) for p in deferred.pop(g, ()))
            last[g] = -1  # closed: later results stay where they are
        if line.boundary:
            yield from ((LINK, link) for link in links.boundaries.pop(pos, ()))
    for g in sorted(deferred):  # a response whose last line never came (cannot happen)
        yield from ((LINE, p) for p in deferred[g])


def _pair_compactions(index: FileIndex, plan: Plan) -> None:
    """Pair each compact summary with the boundary above it (through non-message lines)."""
    lines = index.lines
    for pos, line in enumerate(lines):
        if not line.summary or line.role != "user":
            continue
        seen = 0
        up = line.parent_at
        while 0 <= up < pos and seen < 64:
            above = lines[up]
            if above.boundary:
                plan.compactions[pos] = up
                break
            if above.role is not None:
                break
            up = above.parent_at
            seen += 1


def _main_line(lines: LineTable) -> int:
    for want in ("message", "transcript"):
        for pos in range(len(lines) - 1, -1, -1):
            line = lines[pos]
            if (want == "message" and line.role is not None and not line.sidechain) or (
                want == "transcript" and line.transcript
            ):
                return pos
    return len(lines) - 1


def _depth_first(plan: Plan, main_end: int) -> None:
    """``plan.order``: depth first, the child leading to ``main_end`` always last; and
    ``plan.forks``: the nodes with more than one child (a branch, or several roots)."""
    size = len(plan.kinds)
    # Children as one array sliced by node (node ``size`` stands for "no parent"): a list
    # per node would cost more than the whole plan.
    first = array("i", bytes(4 * (size + 2)))
    for parent in plan.parents:
        first[(parent if parent >= 0 else size) + 1] += 1
    for n in range(1, size + 2):
        first[n] += first[n - 1]
    fill = array("i", first)
    children = array("i", bytes(4 * size))
    for node, parent in enumerate(plan.parents):
        at = parent if parent >= 0 else size
        children[fill[at]] = node
        fill[at] += 1
    on_main = bytearray(size + 1)
    node = main_end
    while node >= 0:
        on_main[node] = 1
        node = plan.parents[node]
    plan.forks = bytearray(size)
    stack = array("i")

    def push(of: int) -> None:
        siblings = children[first[of] : first[of + 1]]
        if len(siblings) > 1 and of < size:
            plan.forks[of] = 1
        # Popped from the end: the main child goes on the stack first, so it comes last.
        stack.extend(n for n in siblings if on_main[n])
        stack.extend(n for n in reversed(siblings) if not on_main[n])

    push(size)
    while stack:
        node = stack.pop()
        plan.order.append(node)
        push(node)


def plan_file(index: FileIndex, links: Links | None = None) -> Plan:
    """The ASF tree of an indexed file (see the module docstring)."""
    links = links if links is not None else Links()
    plan = Plan()
    lines = index.lines
    chains, chain_of = _assign(index, plan)
    _pair_compactions(index, plan)
    plan.main_line = _main_line(lines)
    main_chain = chain_of[plan.main_line] if plan.main_line >= 0 else -1
    attach: dict[int, int] = {}  # line position -> node a branch from it hangs from
    fork_lines = {f for f in chains.fork if f >= 0}
    main_end = -1
    for chain, positions in enumerate(chains.lines):
        nodes: Iterable[tuple[int, int]] = _chain_nodes(positions, lines, plan, links)
        if chain == main_chain:
            nodes = itertools.chain(nodes, [(LINK, link) for link in links.tail])
            links.tail = []
        fork = chains.fork[chain]
        parent = attach[fork] if fork >= 0 else -1
        plan.roots += parent < 0
        last_line = -1
        for kind, ref in nodes:
            parent = plan.add(kind, ref, parent)
            if kind == LINE:
                last_line = ref
            if last_line in fork_lines:
                attach[last_line] = parent
        if chain == main_chain:
            main_end = parent
    if links.tail:  # no conversation at all: the links alone, as one more root
        parent = -1
        for link in links.tail:
            parent = plan.add(LINK, link, parent)
        main_end = parent
    _depth_first(plan, main_end)
    return plan
