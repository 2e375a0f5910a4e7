// SPDX-License-Identifier: GPL-2.0
//
// Open a flame graph HTML in headless chromium, wait until the page says it
// has drawn (perf-flamegraph's pages resolve window.flamegraphDrawn once d3
// has finished), check that each NAME is a drawn frame (labelled, or with
// its name in its tooltip when it is too narrow for a label), and save a
// screenshot that is checked to show a flame graph. Only the labels and the
// frames of the names asked for are read from the page, not its DOM. Run
// through the check-flamegraph wrapper.
//
// Chromium is driven over its DevTools pipe rather than with --dump-dom and
// --screenshot: under --virtual-time-budget headless chromium runs few or no
// animation frames, and d3 draws the frame labels in transitions that need
// them, so a dump taken that way may show empty labels.

'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { spawn } = require('child_process');
const { pathToFileURL } = require('url');

const PROG = 'check-flamegraph';
const WIDTH = 1400;
const HEIGHT = 900;
// How long the page may take, from chromium's start to the end of its
// drawing: a fixed part for the browser and one per frame the page draws
// (its data-flamegraph-frames), generous for a loaded 2-core machine. A
// pruned JVM profile has a few thousand frames; an unpruned one 30,000.
const BASE_MS = 30000;
const PER_FRAME_MS = 4;

// The browser being driven, ended with its process group on any failure.
let active = null;

function cleanup() {
	if (!active)
		return;
	if (!active.exited) {
		try {
			process.kill(-active.proc.pid, 'SIGKILL');
		} catch (e) {
			// already gone
		}
	}
	fs.rmSync(active.profile, { recursive: true, force: true });
	active = null;
}

function fail(msg) {
	cleanup();
	process.stderr.write(`${PROG}: FAIL: ${msg}\n`);
	process.exit(1);
}

function parseArgs(argv) {
	const opt = { dom: null, rest: [] };
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === '--dom' && i + 1 < argv.length)
			opt.dom = argv[++i];
		else
			opt.rest.push(argv[i]);
	}
	if (opt.rest.length < 3) {
		process.stderr.write(`Usage: ${PROG} [--dom DOM.html] HTML PNG NAME...\n`);
		process.exit(2);
	}
	[opt.html, opt.png, ...opt.names] = opt.rest;
	return opt;
}

// ---- a minimal DevTools protocol client over --remote-debugging-pipe ----

class Browser {
	constructor(exe, profile) {
		const args = [
			'--headless', '--disable-gpu', '--disable-dev-shm-usage',
			'--no-first-run', '--no-default-browser-check',
			'--disable-extensions', '--disable-sync', '--mute-audio',
			'--hide-scrollbars', `--window-size=${WIDTH},${HEIGHT}`,
			`--user-data-dir=${profile}`, '--remote-debugging-pipe',
			'about:blank',
		];
		if (process.getuid && process.getuid() === 0)
			args.unshift('--no-sandbox');
		this.profile = profile;
		this.proc = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
					       detached: true });
		this.log = '';
		this.proc.stderr.on('data', (d) => { this.log = (this.log + d).slice(-4000); });
		this.next = 0;
		this.pending = new Map();
		this.listeners = [];
		this.exited = false;
		let buf = '';
		const rd = this.proc.stdio[4];
		rd.setEncoding('utf8');
		rd.on('data', (chunk) => {
			buf += chunk;
			let i;
			while ((i = buf.indexOf('\0')) >= 0) {
				const msg = JSON.parse(buf.slice(0, i));
				buf = buf.slice(i + 1);
				this.dispatch(msg);
			}
		});
		this.proc.on('error', (e) => this.abort(`cannot run ${exe}: ${e.message}`));
		this.proc.on('exit', () => {
			this.exited = true;
			this.abort('chromium exited early');
		});
	}

	abort(why) {
		for (const p of this.pending.values())
			p.reject(new Error(`${why}\n--- chromium's last output ---\n${this.log}`));
		this.pending.clear();
	}

	dispatch(msg) {
		if (msg.id !== undefined) {
			const p = this.pending.get(msg.id);
			if (!p)
				return;
			this.pending.delete(msg.id);
			if (msg.error)
				p.reject(new Error(`${p.method}: ${msg.error.message}`));
			else
				p.resolve(msg.result);
			return;
		}
		for (const l of this.listeners)
			if (l.method === msg.method)
				l.fn(msg.params);
	}

	on(method, fn) {
		this.listeners.push({ method, fn });
	}

	send(method, params = {}, sessionId = undefined) {
		if (this.exited)
			return Promise.reject(new Error('chromium is not running'));
		const id = ++this.next;
		this.proc.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
		return new Promise((resolve, reject) =>
			this.pending.set(id, { resolve, reject, method }));
	}

	async close() {
		if (this.exited)
			return;
		const gone = new Promise((res) => this.proc.once('exit', res));
		this.send('Browser.close').catch(() => {});
		const t = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
		await gone;
		clearTimeout(t);
	}
}

async function render(exe, htmlFile, names, domFile) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'check-flamegraph-'));
	const b = active = new Browser(exe, profile);
	const errors = [];
	const fetched = [];
	try {
		const { targetId } = await b.send('Target.createTarget', { url: 'about:blank' });
		const { sessionId } = await b.send('Target.attachToTarget', { targetId, flatten: true });
		const page = (m, p) => b.send(m, p, sessionId);
		b.on('Runtime.exceptionThrown', (p) =>
			errors.push(p.exceptionDetails.exception ?
				p.exceptionDetails.exception.description : p.exceptionDetails.text));
		b.on('Network.requestWillBeSent', (p) => {
			if (!/^(file|data|about):/.test(p.request.url))
				fetched.push(p.request.url);
		});
		await page('Runtime.enable');
		await page('Network.enable');
		await page('Page.enable');
		await page('Emulation.setDeviceMetricsOverride',
			   { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false });
		const loaded = new Promise((res) => b.on('Page.loadEventFired', res));
		const nav = await page('Page.navigate', { url: pathToFileURL(path.resolve(htmlFile)).href });
		if (nav.errorText)
			throw new Error(`cannot open ${htmlFile}: ${nav.errorText}`);
		await loaded;

		// The page settles window.flamegraphDrawn when d3 is done (or
		// rejects it when its script throws); wait for that, then read
		// the labels drawn and, for names not drawn, whether the data
		// has them.
		const expr = `(async (names) => {
			const st = { error: null };
			if (!(window.flamegraphDrawn instanceof Promise))
				st.error = 'the page does not say when it has drawn ' +
					'(no window.flamegraphDrawn: made by an older perf-flamegraph?)';
			else
				await window.flamegraphDrawn.catch((e) => { st.error = String(e); });
			const shown = new Set();
			for (const d of document.querySelectorAll('#chart div.d3-flame-graph-label'))
				if (d.style.display !== 'none' && d.textContent !== '')
					shown.add(d.textContent);
			// A frame narrower than its label is drawn with its name
			// in its tooltip: the widest of each name asked for.
			const width = new Map();
			for (const g of document.querySelectorAll('#chart g.frame')) {
				const n = g.getAttribute('name');
				const r = g.querySelector('rect');
				const w = r ? Number(r.getAttribute('width')) : 0;
				if (names.includes(n) && w > (width.get(n) || 0))
					width.set(n, w);
			}
			const inData = new Set();
			const el = document.getElementById('flamegraph-data');
			if (el) {
				const stack = [JSON.parse(el.textContent)];
				while (stack.length) {
					const n = stack.pop();
					inData.add(n.name);
					(n.children || []).forEach((c) => stack.push(c));
				}
			}
			return {
				error: st.error,
				state: document.documentElement.getAttribute('data-flamegraph'),
				frames: document.querySelectorAll('#chart g.frame').length,
				shown: shown.size,
				names: names.map((n) => ({ name: n, labelled: shown.has(n),
					width: width.get(n) || 0, inData: inData.has(n) })),
			};
		})(${JSON.stringify(names)})`;
		const got = (await page('Runtime.evaluate',
			{ expression: expr, awaitPromise: true, returnByValue: true })).result.value;
		let dom = null;
		if (domFile)
			dom = (await page('Runtime.evaluate', { expression: 'document.documentElement.outerHTML',
				returnByValue: true })).result.value;
		const shot = await page('Page.captureScreenshot', { format: 'png' });
		return { got, dom, png: Buffer.from(shot.data, 'base64'), errors, fetched };
	} finally {
		await b.close();
		cleanup();
	}
}

// ---- what the screenshot shows ------------------------------------------

function decodePng(buf) {
	const sig = '89504e470d0a1a0a';
	if (buf.length < 8 || buf.subarray(0, 8).toString('hex') !== sig)
		throw new Error('not a PNG file');
	let off = 8;
	let ihdr = null;
	const idat = [];
	while (off + 8 <= buf.length) {
		const len = buf.readUInt32BE(off);
		const type = buf.toString('latin1', off + 4, off + 8);
		const data = buf.subarray(off + 8, off + 8 + len);
		if (type === 'IHDR')
			ihdr = { w: data.readUInt32BE(0), h: data.readUInt32BE(4),
				 depth: data[8], ctype: data[9], interlace: data[12] };
		else if (type === 'IDAT')
			idat.push(data);
		else if (type === 'IEND')
			break;
		off += 12 + len;
	}
	if (!ihdr)
		throw new Error('PNG without IHDR');
	const bpp = { 2: 3, 6: 4 }[ihdr.ctype];
	if (ihdr.depth !== 8 || !bpp || ihdr.interlace !== 0)
		throw new Error(`unexpected PNG format (depth ${ihdr.depth}, colour type ${ihdr.ctype})`);
	const raw = zlib.inflateSync(Buffer.concat(idat));
	const stride = ihdr.w * bpp;
	const px = Buffer.alloc(stride * ihdr.h);
	for (let y = 0; y < ihdr.h; y++) {
		const f = raw[y * (stride + 1)];
		const src = y * (stride + 1) + 1;
		const dst = y * stride;
		for (let x = 0; x < stride; x++) {
			const a = x >= bpp ? px[dst + x - bpp] : 0;
			const b = y > 0 ? px[dst - stride + x] : 0;
			const c = x >= bpp && y > 0 ? px[dst - stride + x - bpp] : 0;
			let v = raw[src + x];
			switch (f) {
			case 0: break;
			case 1: v += a; break;
			case 2: v += b; break;
			case 3: v += (a + b) >> 1; break;
			case 4: {
				const p = a + b - c;
				const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
				v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
				break;
			}
			default: throw new Error(`bad PNG filter ${f}`);
			}
			px[dst + x] = v & 0xff;
		}
	}
	return { w: ihdr.w, h: ihdr.h, bpp, px };
}

// Distinct colours, and the share of pixels in d3-flame-graph's default
// "warm" palette (red to orange to yellow, drawn at 80% opacity on white).
function pngStats(img) {
	const colours = new Set();
	let warm = 0;
	let blank = 0;
	const n = img.w * img.h;
	for (let i = 0; i < n; i++) {
		const o = i * img.bpp;
		const r = img.px[o], g = img.px[o + 1], b = img.px[o + 2];
		colours.add((r << 16) | (g << 8) | b);
		if (r >= 200 && b <= 110 && r - b >= 100 && g >= 40)
			warm++;
		if (r > 245 && g > 245 && b > 245)
			blank++;
	}
	return { colours: colours.size, warm: warm / n, blank: blank / n };
}

// The number of frames the page says it draws, read from its <html> tag.
function pageFrames(file) {
	const fd = fs.openSync(file, 'r');
	const head = Buffer.alloc(4096);
	const n = fs.readSync(fd, head, 0, head.length, 0);
	fs.closeSync(fd);
	const m = /<html[^>]*\sdata-flamegraph-frames="(\d+)"/.exec(head.toString('utf8', 0, n));
	return m ? Number(m[1]) : null;
}

async function main() {
	const opt = parseArgs(process.argv.slice(2));
	const exe = process.env.CHROMIUM || '/usr/bin/chromium';
	if (!fs.existsSync(opt.html))
		fail(`no such file: ${opt.html}`);

	for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
		process.on(sig, () => fail(`stopped by ${sig}`));
	// A page that does not say how many frames it has is judged as one
	// of 30,000: it fails on its missing signal, not on this limit.
	const frames = pageFrames(opt.html);
	const limit = BASE_MS + PER_FRAME_MS * (frames === null ? 30000 : frames);
	const t0 = Date.now();
	setTimeout(() => fail(`the page did not say it had drawn within ${limit / 1000} s ` +
			      `(waited for window.flamegraphDrawn to settle; the limit is ` +
			      `${BASE_MS / 1000} s and ${PER_FRAME_MS} ms for each of its ` +
			      `${frames === null ? 'unknown number of' : frames} frames)`),
		   limit).unref();
	let r;
	try {
		r = await render(exe, opt.html, opt.names, opt.dom);
	} catch (e) {
		fail(`chromium: ${e.message}`);
	}
	fs.writeFileSync(opt.png, r.png);
	if (opt.dom)
		fs.writeFileSync(opt.dom, r.dom);

	const g = r.got;
	const problems = [];
	if (g.error)
		problems.push(`the page did not draw: ${g.error}`);
	for (const e of r.errors)
		problems.push(`the page threw: ${e}`);
	for (const u of r.fetched)
		problems.push(`the page fetched ${u} (it must be self-contained)`);
	if (g.frames === 0)
		problems.push('no flame graph frames in the page');
	else if (frames !== null && g.frames !== frames)
		problems.push(`the page drew ${g.frames} frames, its data has ${frames}`);
	for (const n of g.names) {
		if (n.labelled)
			console.log(`ok: '${n.name}' is drawn as a frame label`);
		else if (n.width > 0)
			console.log(`ok: '${n.name}' is drawn as a frame ${n.width.toFixed(1)} px wide, ` +
				    'too narrow for its label (its name is in its tooltip)');
		else if (n.inData)
			problems.push(`'${n.name}' is in the embedded data but not drawn as a frame`);
		else
			problems.push(`'${n.name}' is neither drawn nor in the embedded data`);
	}

	let img;
	try {
		img = decodePng(r.png);
	} catch (e) {
		problems.push(`screenshot ${opt.png}: ${e.message}`);
	}
	if (img) {
		const s = pngStats(img);
		const line = `screenshot ${opt.png}: ${img.w}x${img.h}, ${r.png.length} bytes, ` +
			`${s.colours} colours, ${(100 * s.warm).toFixed(1)}% flame-coloured, ` +
			`${(100 * s.blank).toFixed(1)}% white`;
		console.log(line);
		if (img.w !== WIDTH || img.h !== HEIGHT)
			problems.push(`screenshot is ${img.w}x${img.h}, not ${WIDTH}x${HEIGHT}`);
		if (s.colours < 16)
			problems.push(`screenshot has only ${s.colours} colours`);
		if (s.warm < 0.01)
			problems.push('screenshot shows almost no flame graph frames');
	}

	console.log(`${g.frames} frames drawn, ${g.shown} with a visible label, ` +
		    `page ${g.state} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
	if (problems.length)
		fail(problems.join(`\n${PROG}: FAIL: `));
	console.log(`${PROG}: ok: ${opt.html}`);
}

main().catch((e) => fail(e.stack || String(e)));
