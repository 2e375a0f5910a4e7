// SPDX-License-Identifier: GPL-2.0
//
// Print 'perf script' text shaped like a JVM profiled with perf -g: a
// main thread whose Java methods (Hot.alpha and its callers) take most
// samples, and compiler, GC and VM threads whose deep C++ stacks spread a
// third of them over tens of thousands of distinct frames, as the demo's
// JVM does. The same arguments give the same text (a seeded generator).
//
//   node jvm-like.js SAMPLES [SEED]

'use strict';

const samples = Number(process.argv[2]);
let seed = Number(process.argv[3] || 1) >>> 0 || 1;
if (!(samples > 0)) {
	process.stderr.write('Usage: node jvm-like.js SAMPLES [SEED]\n');
	process.exit(2);
}

// xorshift32: deterministic on every platform.
function rand(n) {
	seed ^= seed << 13;
	seed >>>= 0;
	seed ^= seed >>> 17;
	seed ^= seed << 5;
	seed >>>= 0;
	return seed % n;
}

const libjvm = '/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so';
const libc = '/usr/lib/x86_64-linux-gnu/libc.so.6';
const hot = ['Hot.alpha(J)J', 'Hot.beta(I)D', 'Hot.gamma(J)J'];
const threads = [
	{ comm: 'java', tid: 82, share: 60 },
	{ comm: 'C1 CompilerThre', tid: 90, share: 25 },
	{ comm: 'VM Thread', tid: 86, share: 8 },
	{ comm: 'GC Thread#0', tid: 84, share: 7 },
];
// C++ call trees: a frame's callees are a few common ones and a long
// tail, so stacks share their outer frames and part in their inner ones.
const cxx = (t, path) => `${t.comm.split(' ')[0]}Phase${path.length}::step${path.join('_')}(Node*, int)`;

const out = [];
let time = 100;
for (let s = 0; s < samples; s++) {
	let r = rand(100);
	let t = threads[0];
	for (const th of threads) {
		if (r < th.share) {
			t = th;
			break;
		}
		r -= th.share;
	}
	time += 0.000251;
	const frames = [];
	if (t.tid === 82) {
		const leaf = rand(10);
		frames.push(leaf < 6 ? hot[1] : leaf < 8 ? hot[0] : hot[2]);
		frames.push('Hot.run(I)V', 'Hot.main([Ljava/lang/String;)V',
			    'call_stub', 'JavaCalls::call_helper', 'JavaMain');
	} else {
		const depth = 6 + rand(14);
		const path = [];
		for (let d = 0; d < depth; d++) {
			path.push(rand(1 + rand(d < 3 ? 4 : 6)));
			frames.unshift(cxx(t, path));
		}
		frames.push('Thread::call_run', 'thread_native_entry');
	}
	frames.push('start_thread', 'clone3');
	out.push(`${t.comm.padStart(16)} ${String(t.tid).padStart(6)} ${time.toFixed(6)}:     250000 cpu-clock:u: `);
	frames.forEach((f, i) => {
		const ip = (0x7f0000001000 + rand(0x100000)).toString(16);
		const dso = f.startsWith('Hot.') ? '[JIT] tid 82' :
			i >= frames.length - 2 ? libc : libjvm;
		out.push(`\t    ${ip} ${f}+0x${rand(0x200).toString(16)} (${dso})`);
	});
	out.push('');
	if (out.length > 10000) {
		process.stdout.write(out.join('\n') + '\n');
		out.length = 0;
	}
}
process.stdout.write(out.join('\n') + '\n');
