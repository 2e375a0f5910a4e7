// SPDX-License-Identifier: GPL-2.0
//
// Fold 'perf script' text into stacks and write one self-contained HTML
// flame graph (d3 and d3-flame-graph inlined, the profile embedded as JSON).
// Run through the perf-flamegraph wrapper; 'perf-flamegraph --help' tells how.

'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const readline = require('readline');
const { spawnSync } = require('child_process');

const HERE = __dirname;
const PROG = 'perf-flamegraph';

const USAGE = `Usage: ${PROG} [options] [FILE]

Reads 'perf script' output from FILE (default: standard input) and writes a
self-contained HTML flame graph. Stacks are rooted at the command name,
outermost frame first; a frame without a symbol is named [dso] or [unknown].

  -o, --output FILE   write the HTML to FILE (default: standard output)
  -t, --title TEXT    title of the page (default: "perf flame graph")
      --folded        print folded stacks ("comm;outer;...;inner COUNT")
                      instead of HTML; needs no npm packages
      --minwidth PCT  merge the frames narrower than PCT percent of all
                      samples (default 0.1; 0 keeps every frame): beside
                      wider ones they become one frame "[N frames < PCT%]",
                      or part of their caller's own width when even
                      together they are narrower; the page says how many
                      samples that touched
      --build-dir DIR where the npm packages are installed (default:
                      $PERF_FLAMEGRAPH_BUILD_DIR, else ../build/flamegraph
                      next to this script)
  -h, --help          show this help
`;

function die(msg) {
	process.stderr.write(`${PROG}: ${msg}\n`);
	process.exit(1);
}

function parseArgs(argv) {
	const opt = {
		output: null,
		title: 'perf flame graph',
		folded: false,
		minwidth: 0.1,
		buildDir: process.env.PERF_FLAMEGRAPH_BUILD_DIR ||
			path.resolve(HERE, '..', 'build', 'flamegraph'),
		input: null,
	};
	const value = (i, name) => {
		if (i + 1 >= argv.length)
			die(`option ${name} needs a value`);
		return argv[i + 1];
	};
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		switch (a) {
		case '-o': case '--output': opt.output = value(i++, a); break;
		case '-t': case '--title': opt.title = value(i++, a); break;
		case '--build-dir': opt.buildDir = path.resolve(value(i++, a)); break;
		case '--folded': opt.folded = true; break;
		case '--minwidth': {
			const v = value(i++, a);
			const pct = /^\d+(\.\d+)?%?$/.test(v) ? parseFloat(v) : NaN;
			if (!(pct >= 0 && pct < 100))
				die(`--minwidth wants a percentage from 0 to below 100, not '${v}'`);
			opt.minwidth = pct;
			break;
		}
		case '-h': case '--help': process.stdout.write(USAGE); process.exit(0); break;
		default:
			if (a !== '-' && a.startsWith('-'))
				die(`unknown option '${a}' (see --help)`);
			if (opt.input !== null)
				die('only one input file may be given');
			opt.input = a;
		}
	}
	return opt;
}

// ---- parsing perf script text -------------------------------------------

// A sample line: "comm  tid" or "comm  pid/tid", an optional "[cpu]", then
// "time:". Other lines that are not part of a call chain are ignored.
const HEADER = /^\s*(\S.*?)\s+-?\d+(?:\/-?\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:(.*)$/;
// "ip sym+off (dso)", as in a callchain line or at the end of a sample line.
const FRAME = /^\s*([0-9a-fA-F]+)(?:\s+(.*?))?\s*$/;

function dsoName(dso) {
	if (!dso || dso === '[unknown]')
		return '[unknown]';
	if (dso.startsWith('['))
		return dso;          // [kernel.kallsyms], [vdso], [JIT] tid 71
	return `[${path.basename(dso)}]`;
}

// "jit_alpha+0x12 ([JIT] tid 71)" -> "jit_alpha"; "[unknown] (/tmp/x.map)"
// -> "[x.map]". The dso is the balanced parenthesised group at the end,
// when a blank precedes it (a C++ signature's own parentheses are not).
function frameName(text) {
	let sym = (text || '').trim();
	let dso = null;
	if (sym.endsWith(')')) {
		let depth = 0;
		for (let i = sym.length - 1; i >= 0; i--) {
			if (sym[i] === ')')
				depth++;
			else if (sym[i] === '(' && --depth === 0) {
				if (i === 0 || /\s/.test(sym[i - 1])) {
					dso = sym.slice(i + 1, -1);
					sym = sym.slice(0, i).trim();
				}
				break;
			}
		}
	}
	sym = sym.replace(/\+0x[0-9a-fA-F]+$/, '');
	if (sym === '' || sym === '[unknown]')
		return dsoName(dso);
	return sym;
}

// What follows "time:" on a sample line: optional period and event name
// ("250000 cpu-clock:u:"), then optionally "ip sym (dso)".
function inlineFrame(rest) {
	const re = /\S+/g;
	let m;
	const toks = [];
	while ((m = re.exec(rest)) !== null)
		toks.push({ s: m[0], at: m.index });
	let i = 0;
	while (i < toks.length) {
		if (toks[i].s.endsWith(':'))
			i++;
		else if (/^\d+$/.test(toks[i].s) && i + 1 < toks.length &&
			 toks[i + 1].s.endsWith(':'))
			i++;
		else
			break;
	}
	if (i >= toks.length || !/^[0-9a-fA-F]+$/.test(toks[i].s))
		return null;
	return frameName(rest.slice(toks[i].at + toks[i].s.length));
}

class Folder {
	constructor() {
		this.counts = new Map();
		this.cur = null;
	}

	flush() {
		const c = this.cur;
		if (!c)
			return;
		this.cur = null;
		let frames = c.chain.length ? c.chain.slice().reverse() :
			(c.inline !== null ? [c.inline] : []);
		// A frame-pointer walk into code without frame pointers reads
		// garbage: up to perf's 127 "[unknown]" frames. One says it, and
		// keeps the graph as tall as its real stacks.
		frames = frames.filter((f, i) => f !== '[unknown]' || frames[i - 1] !== '[unknown]');
		// ';' separates frames in a folded stack: keep it out of names.
		const key = [c.comm, ...frames].map((f) => f.replace(/;/g, ':')).join(';');
		this.counts.set(key, (this.counts.get(key) || 0) + 1);
	}

	start(comm, rest) {
		this.flush();
		this.cur = { comm: comm.trim(), inline: inlineFrame(rest || ''), chain: [] };
	}

	line(raw) {
		const line = raw.replace(/\r$/, '');
		if (line.trim() === '') {
			this.flush();
			return;
		}
		if (line.startsWith('#'))
			return;
		let m;
		if (this.cur && line.startsWith('\t') && (m = FRAME.exec(line))) {
			this.cur.chain.push(frameName(m[2]));
			return;
		}
		if ((m = HEADER.exec(line))) {
			this.start(m[1], m[2]);
			return;
		}
		if (this.cur && /^\s/.test(line) && (m = FRAME.exec(line)))
			this.cur.chain.push(frameName(m[2]));
	}

	finish() {
		this.flush();
		return this.counts;
	}
}

async function fold(input) {
	const stream = input === null || input === '-' ?
		process.stdin : fs.createReadStream(input);
	stream.on('error', (e) => die(`cannot read ${input}: ${e.message}`));
	const folder = new Folder();
	const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
	for await (const line of rl)
		folder.line(line);
	return folder.finish();
}

function foldedText(counts) {
	return [...counts.keys()].sort()
		.map((k) => `${k} ${counts.get(k)}\n`).join('');
}

// ---- the flame graph ----------------------------------------------------

function tree(counts) {
	const root = { name: 'all', value: 0, kids: new Map() };
	for (const [key, n] of counts) {
		let node = root;
		root.value += n;
		for (const name of key.split(';')) {
			let kid = node.kids.get(name);
			if (!kid) {
				kid = { name, value: 0, kids: new Map() };
				node.kids.set(name, kid);
			}
			kid.value += n;
			node = kid;
		}
	}
	const plain = (n) => {
		const o = { name: n.name, value: n.value };
		if (n.kids.size)
			o.children = [...n.kids.values()].map(plain);
		return o;
	};
	return plain(root);
}

// Frames narrower than a pixel cannot be seen or read, but each costs the
// page a node to lay out and draw: a JVM's profile has tens of thousands.
// Siblings narrower than minPct percent of all samples are merged (as
// FlameGraph's --minwidth leaves them out): into one frame named after
// them when together they reach minPct, else into their caller's own
// width. Returns what was merged, for the page to say.
function prune(root, minPct) {
	const merged = { samples: 0, frames: 0, minPct };
	if (!(minPct > 0))
		return merged;
	const min = root.value * minPct / 100;
	const walk = (n) => {
		if (!n.children)
			return;
		const keep = [];
		let value = 0;
		let frames = 0;
		for (const c of n.children) {
			if (c.value >= min) {
				keep.push(c);
				walk(c);
			} else {
				value += c.value;
				frames += frameCount(c);
			}
		}
		if (frames) {
			merged.samples += value;
			merged.frames += frames;
			if (value >= min)
				keep.push({ name: `[${frames} frames < ${minPct}%]`, value });
		}
		if (keep.length)
			n.children = keep;
		else
			delete n.children;
	};
	walk(root);
	return merged;
}

function frameCount(n) {
	return 1 + (n.children || []).reduce((a, c) => a + frameCount(c), 0);
}

function ensureModules(buildDir) {
	const pkg = fs.readFileSync(path.join(HERE, 'package.json'));
	const lock = fs.readFileSync(path.join(HERE, 'package-lock.json'));
	const want = crypto.createHash('sha256').update(pkg).update(lock).digest('hex');
	const stamp = path.join(buildDir, '.installed');
	const have = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8').trim() : '';
	if (have === want && fs.existsSync(path.join(buildDir, 'node_modules')))
		return;

	fs.mkdirSync(buildDir, { recursive: true });
	fs.rmSync(stamp, { force: true });
	fs.writeFileSync(path.join(buildDir, 'package.json'), pkg);
	fs.writeFileSync(path.join(buildDir, 'package-lock.json'), lock);
	process.stderr.write(`${PROG}: installing d3 and d3-flame-graph in ${buildDir}\n`);
	const args = ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
	const r = spawnSync('npm', args, { cwd: buildDir, stdio: ['ignore', 2, 2] });
	if (r.error && r.error.code === 'ENOENT')
		die('npm not found: install the Debian package npm');
	if (r.error || r.status !== 0)
		die(`'npm ci' failed in ${buildDir}`);
	fs.writeFileSync(stamp, want + '\n');
}

function readAsset(buildDir, rel) {
	const file = path.join(buildDir, 'node_modules', rel);
	try {
		return fs.readFileSync(file, 'utf8');
	} catch (e) {
		die(`cannot read ${file}: ${e.message}`);
	}
}

const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) =>
	({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

// Text that goes inside <script> or <style> must not end the element early.
const inlineSafe = (s) => s.replace(/<\/(script|style)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

const group = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

// The page tells when it has drawn, for check-flamegraph and any other
// reader: window.flamegraphDrawn is a promise that settles once d3 has no
// transition left on any element of the chart (d3 deletes an element's
// __transition when its last one ends) and every label wide enough to show
// has its text; the <html> element's data-flamegraph attribute goes from
// "drawing" to "drawn" (or "error") and a "flamegraph-drawn" event fires
// on the document.
function html(title, data, merged, buildDir) {
	const d3 = readAsset(buildDir, 'd3/dist/d3.min.js');
	const fg = readAsset(buildDir, 'd3-flame-graph/dist/d3-flamegraph.umd.min.js');
	const css = readAsset(buildDir, 'd3-flame-graph/dist/d3-flamegraph.css');
	const json = JSON.stringify(data).replace(/[<>&\u2028\u2029]/g,
		(c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
	const t = escapeHtml(title);
	const frames = frameCount(data);
	const note = merged.frames ?
		` &middot; ${group(merged.samples)} samples (${(100 * merged.samples / data.value).toFixed(1)}%) ` +
		`in ${group(merged.frames)} frames narrower than ${merged.minPct}% merged ` +
		'(<code>perf-flamegraph --minwidth</code>)' : '';
	return `<!DOCTYPE html>
<html lang="en" data-flamegraph="drawing" data-flamegraph-frames="${frames}">
<head>
<meta charset="utf-8">
<title>${t}</title>
<style>
${inlineSafe(css)}
body { font-family: Verdana, sans-serif; margin: 16px; }
h1 { font-size: 20px; margin: 0 0 4px; }
#bar { margin: 8px 0; font-size: 13px; }
#bar input { width: 20em; }
#details { min-height: 1.5em; font-size: 13px; color: #444; }
</style>
</head>
<body>
<h1>${t}</h1>
<div id="bar">${group(data.value)} samples in ${group(frames)} frames${note} &middot;
<input id="term" type="search" placeholder="search (regex)">
<button id="reset" type="button">reset zoom</button></div>
<div id="chart"></div>
<div id="details"></div>
<script type="application/json" id="flamegraph-data">${json}</script>
<script>
window.flamegraphDrawn = new Promise(function (resolve, reject) {
	window.flamegraphSettle = { resolve: resolve, reject: reject };
});
window.addEventListener('error', function (e) {
	document.documentElement.setAttribute('data-flamegraph', 'error');
	window.flamegraphSettle.reject(e.error || new Error(e.message));
});
</script>
<script>${inlineSafe(d3)}</script>
<script>${inlineSafe(fg)}</script>
<script>
(function () {
	var data = JSON.parse(document.getElementById('flamegraph-data').textContent);
	var box = document.getElementById('chart');
	var chart = flamegraph.default()
		.width(Math.max(box.clientWidth, 600))
		.cellHeight(18)
		.sort(true)
		.setDetailsElement(document.getElementById('details'));
	d3.select(box).datum(data).call(chart);
	document.getElementById('term').addEventListener('input', function () {
		if (this.value) {
			chart.search(this.value);
		} else {
			chart.clear();
		}
	});
	document.getElementById('reset').addEventListener('click', function () {
		chart.resetZoom();
	});

	function drawn() {
		var all = box.querySelectorAll('*');
		var i;

		for (i = 0; i < all.length; i++)
			if (all[i].__transition)
				return false;
		all = box.querySelectorAll('div.d3-flame-graph-label');
		for (i = 0; i < all.length; i++)
			if (all[i].style.display !== 'none' && all[i].textContent === '')
				return false;
		return true;
	}
	(function wait() {
		if (!drawn()) {
			requestAnimationFrame(wait);
			return;
		}
		var root = document.documentElement;
		var n = box.querySelectorAll('g.frame').length;

		root.setAttribute('data-flamegraph', 'drawn');
		document.dispatchEvent(new CustomEvent('flamegraph-drawn', { detail: { frames: n } }));
		window.flamegraphSettle.resolve({ frames: n });
	})();
})();
</script>
</body>
</html>
`;
}

async function main() {
	const major = Number(process.versions.node.split('.')[0]);
	if (major < 18)
		die(`node ${process.versions.node} is too old: 18 or later is needed`);
	const opt = parseArgs(process.argv.slice(2));
	if (!opt.folded && !opt.output && process.stdout.isTTY)
		die('not writing HTML to a terminal: give -o FILE');
	const counts = await fold(opt.input);
	if (counts.size === 0)
		die('no samples found in the input (is it perf script output?)');

	let out;
	if (opt.folded) {
		out = foldedText(counts);
	} else {
		ensureModules(opt.buildDir);
		const data = tree(counts);
		const merged = prune(data, opt.minwidth);
		out = html(opt.title, data, merged, opt.buildDir);
	}
	if (opt.output)
		fs.writeFileSync(opt.output, out);
	else
		process.stdout.write(out);
}

main().catch((e) => die(e.stack || String(e)));
