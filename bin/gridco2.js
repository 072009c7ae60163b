#!/usr/bin/env node
// First, before the program is loaded: see dist/cli/keep-tick-shape.js for why.
import { keepTickObjectShape } from '../dist/cli/keep-tick-shape.js';

keepTickObjectShape();
await import('../dist/cli/main.js');
