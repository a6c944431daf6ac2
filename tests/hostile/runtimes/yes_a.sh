#!/bin/sh
# A hostile runtime that floods stdout with 2-byte lines from the start.
exec yes a
