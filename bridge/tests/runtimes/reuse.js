// SPDX-License-Identifier: GPL-2.0
// A workload that makes V8 put new machine code where old code was.
//
//   node --perf-basic-prof --allow-natives-syntax --expose-gc \
//        reuse.js LOG [COUNT [INTERVAL_MS]]
//
// COUNT (default 120) functions gen_0 .. gen_<COUNT-1> are generated one
// after the other with new Function, optimized by TurboFan at once, run
// for INTERVAL_MS (default 25) milliseconds, then dropped and garbage
// collected, so that the next one's code tends to land at the addresses
// the previous one had. LOG gets one line per interval,
//
//   TID START_NS END_NS gen_<n>
//
// with times from process.hrtime.bigint() (CLOCK_MONOTONIC, as
// `perf record -k mono`) and TID the main thread's (process.pid). Between
// START_NS and END_NS the main thread only runs gen_<n> and the loop
// that calls it.
'use strict';

const fs = require('fs');

// The driver must not get gen_<n> inlined into its own code: samples in
// it would then be in the driver's range, not in gen_<n>'s.
require('v8').setFlagsFromString('--no-turbo-inlining');

const logPath = process.argv[2];
const count = Number(process.argv[3] || 120);
const intervalMs = Number(process.argv[4] || 25);
if (!logPath || !(count > 0) || !(intervalMs > 0)) {
	console.error('usage: node --perf-basic-prof --allow-natives-syntax ' +
		      '--expose-gc reuse.js LOG [COUNT [INTERVAL_MS]]');
	process.exit(2);
}
if (typeof gc !== 'function') {
	console.error('reuse.js: run node with --allow-natives-syntax --expose-gc');
	process.exit(2);
}

// %-calls must appear literally in the source, so they live in small
// helpers that are compiled with the natives syntax node was given.
const prepare = new Function('f', '%PrepareFunctionForOptimization(f);');
const optimize = new Function('f', '%OptimizeFunctionOnNextCall(f);');
const status = new Function('f', 'return %GetOptimizationStatus(f);');
const kTurboFanned = 1 << 6;	// V8 11's OptimizationStatus::kTurboFanned

function generate(n) {
	// Each body is a little different so that no two share a cache entry.
	const src = `return function gen_${n}(x, iterations) {
		let a = x | 0;
		for (let i = 0; i < iterations; i++)
			a = (Math.imul(a, ${(2654435761 + 2 * n) >>> 0}) + i + ${n}) | 0;
		return a;
	};`;
	return new Function(src)();
}

function runFor(f, endNs) {
	let acc = 0;
	do {
		acc = f(acc, 4000) ^ acc;
	} while (process.hrtime.bigint() < endNs);
	return acc;
}

const pid = process.pid;
const intervalNs = BigInt(Math.round(intervalMs * 1e6));
const lines = [];
let acc = 0, unoptimized = 0;

for (let n = 0; n < count; n++) {
	let f = generate(n);
	// Warm up with short loops, so that V8 tiers nothing up on its own
	// (concurrently, or to Sparkplug first), then have TurboFan compile
	// gen_<n> right away, on this thread.
	prepare(f);
	f(1, 2);
	f(2, 2);
	optimize(f);
	f(3, 2);
	if (!(status(f) & kTurboFanned))
		unoptimized++;

	const start = process.hrtime.bigint();
	acc ^= runFor(f, start + intervalNs);
	const end = process.hrtime.bigint();
	lines.push(`${pid} ${start} ${end} gen_${n}\n`);

	f = null;
	gc();
}

fs.writeFileSync(logPath, lines.join(''));
console.log(`reuse.js: ${count} functions of ${intervalMs} ms, ` +
	    `${unoptimized} not optimized, acc ${acc}`);
