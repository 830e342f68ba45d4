"""Build strategy.so from strategy.c with upstream clang and ../shared/sbpf (SDK headers, sbf_link.py).

    python3 yieldcli/sandbox/program/build.py [--sbpf DIR] [--out FILE]

The same source and tools give the same bytes; tests/sandbox/program/test_build.py rebuilds
into a temporary file and compares it with the committed strategy.so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "strategy.c"
BUILT = HERE / "strategy.so"
REPO_ROOT = HERE.parents[2]
DEFAULT_SBPF = REPO_ROOT.parent / "shared" / "sbpf"
# -mcpu=v2: v3+ emits JMP32, which the SBPFv0 verifier rejects. Clang 17+ would also need
# -mllvm -bpf-stack-size=4096; the source keeps every frame under upstream's 512 bytes instead.
CFLAGS = ["-Werror", "-O2", "-fno-builtin", "-std=c17", "-target", "bpfel", "-mcpu=v2", "-fPIC"]


def build(out: Path, sbpf: Path = DEFAULT_SBPF, clang: str | None = None) -> None:
    clang = clang or os.environ.get("CLANG", "clang")
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "strategy.o"
        # Relative paths: the object file records no absolute path of this machine.
        subprocess.run(
            [clang, *CFLAGS, "-isystem", str(sbpf / "solana-c-sdk" / "inc"), "-c", SOURCE.name, "-o", str(obj)],
            cwd=HERE,
            check=True,
        )
        subprocess.run([sys.executable, str(sbpf / "sbf_link.py"), str(obj), str(out)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sbpf", type=Path, default=DEFAULT_SBPF)
    parser.add_argument("--out", type=Path, default=BUILT)
    args = parser.parse_args()
    build(args.out, args.sbpf)
    print(f"{args.out}: {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
