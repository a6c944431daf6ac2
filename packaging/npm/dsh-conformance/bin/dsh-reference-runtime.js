#!/usr/bin/env node
require("../launch.js")("dsh-reference-runtime");
