#!/usr/bin/env node
require("../launch.js")("dsh-conformance");
