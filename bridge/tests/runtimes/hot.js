// SPDX-License-Identifier: GPL-2.0
// Two hot functions for the end-to-end tests: hotAlpha costs about twice
// as much per call as hotBeta. Runs for SECONDS (argv[2], default 3),
// prints one line and exits.
'use strict';

// Keep hotAlpha and hotBeta out of their caller: TurboFan would otherwise
// inline both into the OSR code of the loop below, and every sample would
// land in the top-level script's code instead.
require('v8').setFlagsFromString('--no-turbo-inlining');

const seconds = Number(process.argv[2] || 3);
if (!(seconds > 0)) {
	console.error('usage: node hot.js [SECONDS]');
	process.exit(2);
}

function hotAlpha(n) {
	let x = n | 0;
	for (let i = 0; i < 2000; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

function hotBeta(n) {
	let x = n | 0;
	for (let i = 0; i < 1000; i++)
		x = (Math.imul(x, 22695477) + 1 + i) | 0;
	return x;
}

const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
let acc = 0, rounds = 0;
while (process.hrtime.bigint() < end) {
	for (let k = 0; k < 100; k++) {
		acc ^= hotAlpha(acc + k);
		acc ^= hotBeta(acc - k);
	}
	rounds++;
}
console.log(`hot.js: ${rounds * 100} calls each of hotAlpha and hotBeta, acc ${acc}`);
