"""`repair-harness demo`: what it prints when it ends."""

from harness.spec import build_spec


def test_the_demo_ends_with_its_folders_and_four_commands_at_80_columns():
    from harness.readers.demo_page import next_steps

    specs = [
        build_spec(
            {
                "suite": suite,
                "models": ["local"],
                "conditions": ["raw", "allowed_json"],
                "tasks": 2,
                "out": f"runs/demo/{name}",
            }
        )
        for suite, name in (("bank-disputes", "bank"), ("paper-textworld", "textworld"))
    ]
    lines = next_steps(specs)
    assert max(len(line) for line in lines) <= 80
    assert any("runs/demo/bank" in line and "bank-disputes" in line for line in lines)
    assert any("runs/demo/textworld" in line and "paper-textworld" in line for line in lines)
    commands = [line.strip() for line in lines if line.strip().startswith("repair-harness ")]
    assert [c.split()[1] for c in commands] == ["report", "show", "plot", "run"] and "--tasks 10" in lines[-1]
