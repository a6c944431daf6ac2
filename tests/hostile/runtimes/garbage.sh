#!/bin/sh
# A hostile runtime that does not speak the protocol: text on stdout, never a frame.
while true; do echo "garbage: not json"; sleep 0.05; done
