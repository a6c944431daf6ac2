"""``python -m dsh_conformance ARGS`` is ``dsh-conformance ARGS``."""

from dsh_conformance import main

main()
