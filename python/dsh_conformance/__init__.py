"""The dsh-conformance binaries, installed by the wheel into the environment's scripts directory.

``python -m dsh_conformance ARGS`` runs ``dsh-conformance ARGS``; :func:`find_bin` finds either
binary for a caller that wants the path (as ruff's ``find_ruff_bin``).
"""

import os
import sys
import sysconfig

__all__ = ["find_bin"]


def find_bin(name: str = "dsh-conformance") -> str:
    """The path of the bundled binary ``name`` (``dsh-conformance`` or ``dsh-reference-runtime``)."""
    exe = name + (sysconfig.get_config_var("EXE") or "")
    # Where pip puts a wheel's scripts: the environment's, then the user scheme's (pip install
    # --user), then next to the package (pip install --target DIR puts them in DIR/bin).
    dirs = [sysconfig.get_path("scripts")]
    scheme = "nt_user" if os.name == "nt" else "posix_user"
    if scheme in sysconfig.get_scheme_names():
        dirs.append(sysconfig.get_path("scripts", scheme))
    dirs.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    for d in dirs:
        path = os.path.join(d, exe)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{exe} not found in {', '.join(dirs)} (is the wheel installed?)")


def main(name: str = "dsh-conformance") -> None:
    """Run the bundled binary with this process's arguments; its exit code is this process's."""
    path = find_bin(name)
    if os.name == "nt":
        # No exec on Windows: run it as a child and pass its exit code on.
        import subprocess

        sys.exit(subprocess.call([path, *sys.argv[1:]]))
    # The binary replaces this process: its exit code and signals are the caller's directly.
    os.execv(path, [path, *sys.argv[1:]])
