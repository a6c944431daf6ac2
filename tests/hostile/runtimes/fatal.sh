#!/bin/sh
# A hostile runtime that cannot start: its own words are on stderr.
echo "FATAL: config file /nonexistent/dsh.toml not found" >&2
exit 1
