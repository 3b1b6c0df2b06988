"""``callgate drift sdk`` reads type unions by AST (never importing) and diffs them."""

from __future__ import annotations

from pathlib import Path

from callgate.recording._sdkdiff import ROOTS, read_unions, render_diff

OLD = """
from typing import Literal, Optional, Union
from pydantic import Field as FieldInfo

StopReason = Literal["end_turn", "tool_use"]

class TextBlock(BaseModel):
    text: str
    citations: Optional[list] = None
    type: Literal["text"]

class ToolUseBlock(BaseModel):
    id: str
    input: object
    type: Literal["tool_use"]

ContentBlock = Union[TextBlock, ToolUseBlock]

class MessageStartEvent(BaseModel):
    message: object
    type: Literal["message_start"]

RawMessageStreamEvent = Annotated[Union[MessageStartEvent], PropertyInfo(discriminator="type")]

class TextDelta(BaseModel):
    text: str
    type: Literal["text_delta"]

RawContentBlockDelta = Union[TextDelta]
"""

NEW = (
    OLD.replace('"tool_use"]\n\nclass', '"tool_use", "refusal"]\n\nclass', 1)
    .replace("    id: str\n", '    id: str\n    async_: bool = FieldInfo(alias="async")\n')
    .replace("    citations: Optional[list] = None\n", "")
    .replace(
        "ContentBlock = Union[TextBlock, ToolUseBlock]\n",
        "class ThinkingBlock(BaseModel):\n    thinking: str\n    type: Literal['thinking']\n\n"
        "ContentBlock = Union[TextBlock, ToolUseBlock, ThinkingBlock]\n",
    )
)


def _package(root: Path, source: str) -> Path:
    folder = root / ROOTS["anthropic"][0][0]
    folder.mkdir(parents=True)
    (folder / "types.py").write_text(source)
    return root


def test_unions_literals_aliases_and_required_fields_are_read_and_diffed(tmp_path: Path) -> None:
    before = read_unions("anthropic", _package(tmp_path / "old", OLD))
    after = read_unions("anthropic", _package(tmp_path / "new", NEW))
    assert set(before["content blocks"]["members"]) == {"text", "tool_use"}
    assert before["content blocks"]["members"]["text"]["required"] == ["text", "type"]
    assert after["content blocks"]["members"]["tool_use"]["required"] == [
        "async", "id", "input", "type"]  # fmt: skip
    assert before["stop reasons"]["values"] == ["end_turn", "tool_use"]
    report = render_diff("anthropic", "1", "2", before, after)
    assert "- new type `thinking` (ThinkingBlock)" in report
    assert "- `text`: removed field `citations`" in report
    assert "- `tool_use`: now required `async`" in report
    assert "- new value `refusal`" in report
    assert "## stream events (1 in 2)\n\n- no change" in report


def test_the_packaged_registry_is_the_one_the_drift_reports_give() -> None:
    import json

    from callgate.recording._sdkdiff import registry_from

    root = Path(__file__).resolve().parents[2]
    readings = [json.loads(p.read_text()) for p in sorted((root / "docs/drift").glob("*.json"))]
    packaged = root / "src/callgate/recording/sdk_types.json"
    assert registry_from(readings) == json.loads(packaged.read_text())


def test_a_class_root_reads_its_own_file_when_two_files_share_a_class_name(
    tmp_path: Path,
) -> None:
    """Chat Completions: ``Choice`` is one class in ``chat_completion.py`` and another in
    ``chat_completion_chunk.py``; a ``module:`` root reads the one it names."""
    folder = tmp_path / ROOTS["openai"][1][0]
    folder.mkdir(parents=True)
    (folder / "chat_completion.py").write_text(
        "class Choice(BaseModel):\n    finish_reason: Literal['stop', 'tool_calls']\n"
        "    message: ChatCompletionMessage\n"
    )
    (folder / "chat_completion_chunk.py").write_text(
        "class Choice(BaseModel):\n    delta: ChoiceDelta\n"
        "    finish_reason: Optional[Literal['stop', 'eos']] = None\n"
    )
    (tmp_path / ROOTS["openai"][0][0]).mkdir(parents=True)
    read = read_unions("openai", tmp_path)
    chunk = read["chat chunk choices"]["members"]["Choice"]
    body = read["chat completion choices"]["members"]["Choice"]
    assert (chunk["required"], chunk["optional"]) == (["delta"], ["finish_reason"])
    assert body["required"] == ["finish_reason", "message"]
    assert read["chat finish reasons"]["values"] == ["eos", "stop"]
    assert read["chat chunks"] == {"members": {}}  # a class the folder does not define
