"""What a run refuses to write because it reads it (:class:`asf_core.pipeline.inputs.Inputs`),
and the line that says why: what the path is to the input, and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from asf_core.errors import OutputError
from asf_core.pipeline.inputs import Inputs

_DO = "writing there would change it; name another path"


def _refused(inputs: Inputs, path: Path, *, named: bool = False) -> str:
    with pytest.raises(OutputError) as caught:
        inputs.check_write(path, named=named)
    return str(caught.value)


def test_a_path_the_user_named_that_is_no_store_is_refused_as_read(tmp_path: Path) -> None:
    """A PATH no plugin claimed is still one the user gave to be read: ``--report`` there is
    refused as such (not as a hard link to itself)."""
    named = tmp_path / "notes.txt"
    named.write_text("mine\n")
    inputs = Inputs.of([], [named])
    assert _refused(inputs, named, named=True) == f"{named}: this run reads it: {_DO}"


def test_a_file_inside_a_folder_store_is_refused_as_inside_it(tmp_path: Path) -> None:
    store = tmp_path / "project"
    store.mkdir()
    inputs = Inputs.of([store])
    inside = store / "sub" / "x.json"
    said = f"{inside}: is inside {store}, which this run reads: {_DO}"
    assert _refused(inputs, inside) == said
    (tmp_path / "link").symlink_to(store)
    linked = f"{tmp_path / 'link'}: is a link to {store}, which this run reads: {_DO}"
    assert _refused(inputs, tmp_path / "link") == linked


def test_a_store_named_through_a_loop_of_links_is_compared_as_written(tmp_path: Path) -> None:
    """A path that cannot be resolved (links in a loop) is kept as written, absolute: the
    run refuses to write it, and looks at every other path as usual."""
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    inputs = Inputs.of([loop], [loop])
    assert inputs.stores == (loop,)
    assert _refused(inputs, loop) == f"{loop}: this run reads it: {_DO}"
    inputs.check_write(tmp_path / "report.json")
