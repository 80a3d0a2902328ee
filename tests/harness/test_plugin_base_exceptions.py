"""A plugin whose import raises a BaseException (issue 66, left from round 5): a traceback, and
KeyboardInterrupt ended with exit 130 and no word. Each is one line naming the plugin, exit 2."""

import pytest

from tests.harness.cli.invoke import invoke

RAISES = {
    "BaseException": ('raise BaseException("boom")\n', "BaseException: boom"),
    "KeyboardInterrupt": (
        "raise KeyboardInterrupt\n",
        "KeyboardInterrupt: its code raised it, or Ctrl-C came while it imported",
    ),
    "its own": ("class Mine(BaseException):\n    pass\n\nraise Mine('x')\n", "Mine: x"),
    "GeneratorExit": ("raise GeneratorExit\n", "GeneratorExit"),
}


@pytest.mark.parametrize("case", sorted(RAISES))
def test_a_base_exception_at_import_is_one_line(tmp_path, case):
    source, says = RAISES[case]
    plugin = tmp_path / "p.py"
    plugin.write_text(source)
    result, text = invoke("suites", "--plugin", plugin)
    assert result.exit_code == 2 and "Traceback" not in text, text
    assert text.strip() == f"error: plugin {plugin} failed to import: {says}", text
