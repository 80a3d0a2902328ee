"""The report's path imports neither statsmodels nor scipy.stats (McNemar, Holm and Wilson repeat
their arithmetic: see test_results_contrasts and test_results_stats), nor matplotlib. scipy.stats
is imported for small samples only, where the sign-flip test enumerates every sign pattern
through scipy. (The report's speed is measured by benchmarks/report_scale.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from results import load, render_report
from results.report import report_columns
out = render_report(load(sys.argv[1], columns=report_columns()), fmt=sys.argv[2])
print(json.dumps(sorted({m for m in sys.modules if m.split(".")[0] in ("statsmodels", "matplotlib")
                         or m == "scipy.stats" or m.startswith("scipy.stats.")})))
"""


def test_a_report_imports_no_statsmodels_nor_scipy_stats(kit, tmp_path: Path) -> None:
    # 16 tasks: 2**16 sign patterns are more than the 10,000 resamples, so no exact enumeration
    solved = {c: {t for t in range(16) if (t * (i + 2)) % 5 < i + 1} for i, c in enumerate(kit.QWEN_SOLVED)}
    run = kit.write(tmp_path / "run", kit.paper_like(solved=solved, tasks=16))
    for fmt in ("json", "table"):
        out = subprocess.run([sys.executable, "-c", PROBE, str(run), fmt], capture_output=True, text=True,
                             cwd=ROOT, timeout=300)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.splitlines()[-1]) == [], fmt
