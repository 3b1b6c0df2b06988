"""Every code block in README.md and docs/ runs, so a doc example cannot rot.

The rules a document follows (docs/docs.md says them for writers):

- The ```python blocks of one document run in order, in one namespace: a later block may
  use the names an earlier one made. Each block is a test of its own, named by document
  and line (``README.md:40``); a block whose earlier blocks did not run in this process
  runs them first, so any one block can be run alone (``-k 'README.md:40'``). They run in a
  temporary directory, one per document, in which ``examples`` links to the repository's
  examples. A block with top-level ``await`` runs in an event loop of its own.
- ``<!-- not-run: <reason> -->`` on the line right before a fence: the block is
  deliberately partial; it is reported as skipped with that reason.
- ``<!-- pytest -->`` right before a fence: the block is a whole test file; pytest runs
  it (in process, through ``pytester``, with warnings as errors) in a directory of its
  own where ``examples`` is the repository's, and at least one test must pass.
- Every ```json block is a whole mock script and must pass ``callgate script check``
  (the command itself runs on it); ``<!-- fragment -->`` right before a fence marks a part
  of one (skipped). ```jsonc blocks are fragments by nature and must say so.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import inspect
import io
import linecache
import re
import sys
import types
from pathlib import Path

import pytest

from callgate.cli import main as callgate_main

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<body>.*?)\s*-->\s*$")
_CHECKED = ("python", "json", "jsonc")
# A test file of the docs runs as strictly as this suite (the -O notice is not an error).
_STRICT = (
    "--strict-markers",
    "-p",
    "no:cacheprovider",
    "-W",
    "error",
    "-W",
    "ignore:assertions not in test modules:pytest.PytestConfigWarning",
)

pytest_plugins = ["pytester"]


@dataclasses.dataclass(frozen=True)
class Block:
    document: Path
    line: int  # 1-based line of the opening fence
    lang: str
    marker: str | None  # the text inside a <!-- ... --> right before the fence
    source: str

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT).as_posix()}:{self.line}"


def blocks_of(document: Path) -> list[Block]:
    """The fenced blocks of one Markdown document, in order (unclosed fence: an error)."""
    lines = document.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            line = lines[j]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            j += 1
        if j == len(lines):
            raise ValueError(f"{document.name}:{i + 1}: the fence opened here is never closed")
        marker = _MARKER.match(lines[i - 1]) if i > 0 else None
        found.append(
            Block(
                document,
                i + 1,
                opening["lang"].lower(),
                marker["body"] if marker else None,
                "\n".join(body) + "\n",
            )
        )
        i = j + 1
    return found


ALL_BLOCKS = [b for d in DOCUMENTS for b in blocks_of(d) if b.lang in _CHECKED]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]
JSON_BLOCKS = [b for b in ALL_BLOCKS if b.lang != "python"]


@dataclasses.dataclass
class _DocumentRun:
    """One document's namespace and directory in this process, and how far it ran."""

    module: types.ModuleType
    directory: Path
    done: set[int] = dataclasses.field(default_factory=set)
    failed: str | None = None


_RUNS: dict[Path, _DocumentRun] = {}


def _document_run(document: Path, factory: pytest.TempPathFactory) -> _DocumentRun:
    run = _RUNS.get(document)
    if run is None:
        directory = factory.mktemp(f"doc-{document.stem}")
        (directory / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
        name = "callgate_doc_" + re.sub(r"\W", "_", document.stem)
        module = types.ModuleType(name)
        module.__file__ = str(document)
        sys.modules[name] = module  # classes defined in a block need their module
        # Tracebacks show the document's own lines.
        text = document.read_text(encoding="utf-8")
        linecache.cache[str(document)] = (len(text), None, text.splitlines(True), str(document))
        run = _RUNS[document] = _DocumentRun(module, directory)
    return run


def _marker(block: Block, allowed: tuple[str, ...]) -> tuple[str, str] | None:
    """(kind, reason) of the block's marker; a marker of another kind fails the test."""
    if block.marker is None:
        return None
    kind, _, reason = block.marker.partition(":")
    kind, reason = kind.strip(), reason.strip()
    if kind not in allowed:
        found = f"<!-- {block.marker} -->"
        pytest.fail(f"{block.name}: a {block.lang} block takes {allowed}, not {found}")
    if kind == "not-run" and not reason:
        pytest.fail(f"{block.name}: <!-- not-run: ... --> needs a reason")
    return kind, reason


def _execute(block: Block, run: _DocumentRun) -> None:
    """Run one python block in the document's namespace, with its own line numbers."""
    source = "\n" * block.line + block.source  # line numbers as in the document
    code = compile(source, str(block.document), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace = run.module.__dict__
    if code.co_flags & inspect.CO_COROUTINE:
        asyncio.run(eval(code, namespace))
    else:
        exec(code, namespace)


def _run_python(block: Block, run: _DocumentRun, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(run.directory)
    for earlier in blocks_of(block.document):
        if earlier.line >= block.line:
            break
        if earlier.lang != "python" or earlier.line in run.done or earlier.marker is not None:
            continue
        if run.failed is not None:
            break
        try:
            _execute(earlier, run)
        except BaseException:
            run.failed = earlier.name
            raise
        run.done.add(earlier.line)
    if run.failed is not None:
        pytest.fail(f"an earlier block of this document failed first: {run.failed}")
    try:
        _execute(block, run)
    except BaseException:
        run.failed = block.name
        raise
    run.done.add(block.line)


def _run_test_file(block: Block, pytester: pytest.Pytester) -> None:
    """pytest on the block as a test file of its own, in process, as strictly as ours."""
    pytester.makepyfile(**{f"test_{block.document.stem.lower()}_{block.line}": block.source})
    (pytester.path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    result = pytester.runpytest(*_STRICT)
    outcomes = result.parseoutcomes()
    if result.ret != 0 or not outcomes.get("passed"):  # exit 5 (no test) fails too
        pytest.fail(f"{block.name}: pytest exited {result.ret} ({outcomes})\n{result.stdout.str()}")


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.name for b in PYTHON_BLOCKS])
def test_python_block_runs(
    block: Block,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    marker = _marker(block, ("not-run", "pytest"))
    if marker is not None and marker[0] == "not-run":
        pytest.skip(f"not run: {marker[1]}")
    if marker is not None:
        _run_test_file(block, request.getfixturevalue("pytester"))
    else:
        _run_python(block, _document_run(block.document, tmp_path_factory), monkeypatch)


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=[b.name for b in JSON_BLOCKS])
def test_json_block_is_a_valid_script(block: Block, tmp_path: Path) -> None:
    marker = _marker(block, ("fragment",))
    if marker is not None:
        pytest.skip("a fragment of a script")
    if block.lang != "json":
        pytest.fail(f"{block.name}: a {block.lang} block is no script: mark it <!-- fragment -->")
    path = tmp_path / f"{block.document.stem}-{block.line}.json"
    path.write_text(block.source, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = callgate_main(["script", "check", str(path)])
    if code != 0:
        pytest.fail(
            f"{block.name}: `callgate script check` exited {code} (a part of a "
            f"script? mark it <!-- fragment -->)\n{out.getvalue()}"
        )


def test_the_block_reader_sees_markers_fences_and_indentation(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text(
        "text\n<!-- not-run: needs a key -->\n```python\nx = 1\n```\n"
        '- item:\n\n  ```json\n  {"turns": []}\n  ```\n'
        "````python\n```\ninner\n```\n````\n",
        encoding="utf-8",
    )
    found = [(b.line, b.lang, b.marker, b.source) for b in blocks_of(doc)]
    assert found == [
        (3, "python", "not-run: needs a key", "x = 1\n"),
        (8, "json", None, '{"turns": []}\n'),
        (11, "python", None, "```\ninner\n```\n"),
    ]
    doc.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="never closed"):
        blocks_of(doc)


_LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?:#[^)\s]*)?\)")


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_every_relative_link_reaches_a_file(document: Path) -> None:
    targets = _LINK.findall(document.read_text(encoding="utf-8"))
    local = [t for t in targets if ":" not in t]  # not https:, mailto: or a script's cite:
    assert [t for t in local if not (document.parent / t).exists()] == []


def test_every_document_with_code_has_a_test() -> None:
    # The README and the reference docs hold code; a reader that found none would pass empty.
    names = {b.document.name for b in ALL_BLOCKS if b.lang == "python"}
    assert {"README.md", "ledger.md"} <= names
    assert any(b.lang == "json" and b.marker is None for b in ALL_BLOCKS)
