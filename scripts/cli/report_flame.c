/*
 * report_flame.c - flame graphs of a profile: folded stacks and SVG, for
 * `lockswap report --folded` and `--svg` (see report_flame.h for what a
 * profile can draw).
 *
 * A graph is a tree of frames built from the profile's call sites: a site's
 * stack (saved innermost first) is walked outermost first from the root,
 * adding its value to every node on the way, so that a node's value is the
 * sum over the stacks through it and its children never exceed it. Frames
 * merge by name: the function, or module+0xoffset when none is known. When
 * the sites do not account for a mutex's whole wait (LOCKSWAP_PROFILE_SAMPLE
 * takes 1 stack in N), the rest is drawn as one "[stack not sampled]" frame,
 * so that a graph's total is the profile's.
 *
 * The SVG is drawn as FlameGraph's (Gregg) are read: the root at the bottom,
 * callees above their callers, widths proportional to the value. Children
 * are ordered by value, largest first (FlameGraph orders them by name), so
 * the hottest stack is the leftmost. Colours: warm for functions, grey for
 * frames without a name, blue for mutexes; each from a hash of the name, so
 * that a function has the same colour in every graph and every run.
 */
#define _GNU_SOURCE
#include "report_flame.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_ROOT, K_FRAME, K_NONAME, K_MUTEX };

struct node {
	char *name;
	enum kind kind;
	uint64_t v;	  /* the value drawn: ns or a count */
	uint64_t n;	  /* what the tooltip adds: waits, or acquisitions */
	const char *line; /* a file:line of the frames merged here */
	bool lines;	  /* ... and more than one */
	struct node **kid;
	unsigned nkid, cap;
};

static void *xalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fputs("lockswap report: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = xalloc(strlen(s) + 1);
	return strcpy(d, s);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A frame's name: its function, or module+0xoffset. */
static char *frame_name(const struct ls_prof_frame *f, enum kind *kind)
{
	char buf[4096];
	if (f->sym && f->symlen) {
		snprintf(buf, sizeof buf, "%.*s", (int)f->symlen, f->sym);
		*kind = K_FRAME;
	} else {
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, f->module ? base_name(f->module) : "?", f->offset);
		*kind = K_NONAME;
	}
	return xstrdup(buf);
}

/* "mutex #N function (file:line)", named by its creation stack as the
 * table's `where` column names it ("rwlock #N ...", "spinlock #N ...");
 * mode: " (read)", " (write)" for an rwlock's sites, or "". */
static char *mutex_name(const struct ls_prof *p, const struct ls_prof_row *r, const char *mode)
{
	char buf[4096];
	const char *what = r->rwlock ? "rwlock" : r->spin ? "spinlock" : "mutex";
	if (r->stack >= p->nstacks || !p->stacks[r->stack].n) {
		snprintf(buf, sizeof buf, "%s #%u at 0x%" PRIx64 "%s", what, r->id, r->address, mode);
		return xstrdup(buf);
	}
	const struct ls_prof_stack *s = &p->stacks[r->stack];
	const struct ls_prof_frame *f = &s->f[ls_prof_naming_frame(s)];
	enum kind k;
	char *fn = frame_name(f, &k);
	if (f->line)
		snprintf(buf, sizeof buf, "%s #%u %s (%s)%s", what, r->id, fn, f->line, mode);
	else
		snprintf(buf, sizeof buf, "%s #%u %s%s", what, r->id, fn, mode);
	free(fn);
	return xstrdup(buf);
}

/* The rows that can wait: the mutexes, rwlocks and spinlocks, in that order. */
static unsigned nlocks(const struct ls_prof *p)
{
	return p->h.nmutex + p->h.nrwlock + p->h.nspin;
}

static const struct ls_prof_row *lock_at(const struct ls_prof *p, unsigned i)
{
	if (i < p->h.nmutex)
		return &p->mutex[i];
	i -= p->h.nmutex;
	return i < p->h.nrwlock ? &p->rwlock[i] : &p->spin[i - p->h.nrwlock];
}

static struct node *node_new(char *name, enum kind kind)
{
	struct node *n = xalloc(sizeof *n);
	n->name = name;
	n->kind = kind;
	return n;
}

/* parent's child of that name, added if new (name is taken or freed) */
static struct node *child(struct node *parent, char *name, enum kind kind)
{
	for (unsigned i = 0; i < parent->nkid; i++)
		if (parent->kid[i]->kind == kind && !strcmp(parent->kid[i]->name, name)) {
			free(name);
			return parent->kid[i];
		}
	if (parent->nkid == parent->cap) {
		parent->cap = parent->cap ? 2 * parent->cap : 4;
		struct node **k = xalloc(parent->cap * sizeof *k);
		if (parent->nkid)
			memcpy(k, parent->kid, parent->nkid * sizeof *k);
		free(parent->kid);
		parent->kid = k;
	}
	return parent->kid[parent->nkid++] = node_new(name, kind);
}

static void add(struct node *n, uint64_t v, uint64_t count, const char *line)
{
	n->v += v;
	n->n += count;
	if (line && !n->line)
		n->line = line;
	else if (line && strcmp(line, n->line) != 0)
		n->lines = true;
}

/* Adds v along stack (outermost first) under at; returns the innermost node. */
static struct node *add_stack(struct node *at, const struct ls_prof *p, unsigned stack, uint64_t v,
			      uint64_t count)
{
	if (stack >= p->nstacks)
		return at;
	const struct ls_prof_stack *s = &p->stacks[stack];
	for (unsigned i = s->n; i-- > 0;) {
		enum kind k;
		char *name = frame_name(&s->f[i], &k);
		at = child(at, name, k);
		add(at, v, count, s->f[i].line);
	}
	return at;
}

static uint64_t waits(const struct ls_prof_row *r)
{
	return ls_prof_waits(r);
}

/* The sites of mutex r under at (wait or contended weight); with_mutex: the
 * mutex as the top frame of each stack. */
static void add_sites(struct node *at, const struct ls_prof *p, const struct ls_prof_row *r,
		      bool count_weight, bool with_mutex)
{
	uint64_t wait = 0, n = 0;
	for (unsigned i = 0; i <= r->nsites; i++) {
		unsigned stack;
		uint64_t sw, sn;
		if (i < r->nsites) {
			stack = r->sites[i].stack;
			sw = r->sites[i].wait_ns;
			sn = r->sites[i].count + r->sites[i].timeouts;
			wait += sw;
			n += sn;
		} else { /* what the sites do not account for */
			stack = LS_PROF_NO_STACK;
			sw = r->wait_ns > wait ? r->wait_ns - wait : 0;
			sn = waits(r) > n ? waits(r) - n : 0;
		}
		uint64_t v = count_weight ? sn : sw;
		if (!v)
			continue;
		struct node *top = at;
		if (stack == LS_PROF_NO_STACK)
			add(top = child(at, xstrdup("[stack not sampled]"), K_NONAME), v, sn, NULL);
		else
			top = add_stack(at, p, stack, v, sn);
		const char *mode = !r->rwlock || stack == LS_PROF_NO_STACK ? ""
				   : r->sites[i].read			   ? " (read)"
									   : " (write)";
		if (with_mutex)
			add(child(top, mutex_name(p, r, mode), K_MUTEX), v, sn, NULL);
	}
}

/* The whole program's graph of weight w. */
static struct node *program_tree(const struct ls_prof *p, enum flame_weight w)
{
	struct node *root = node_new(xstrdup("all"), K_ROOT);
	for (unsigned i = 0; i < nlocks(p); i++) {
		const struct ls_prof_row *r = lock_at(p, i);
		if (w != FLAME_HOLD) {
			add_sites(root, p, r, w == FLAME_CONTENDED, true);
			continue;
		}
		if (!r->hold_ns)
			continue;
		struct node *top = add_stack(root, p, r->stack, r->hold_ns, ls_prof_acquired(r));
		add(child(top, mutex_name(p, r, ""), K_MUTEX), r->hold_ns, ls_prof_acquired(r), NULL);
	}
	for (unsigned i = 0; i < root->nkid; i++) {
		root->v += root->kid[i]->v;
		root->n += root->kid[i]->n;
	}
	return root;
}

/* rows by wait time, descending (ties: as they were, by kind then id) */
static int by_wait(const void *a, const void *b)
{
	const struct ls_prof_row *x = *(const struct ls_prof_row *const *)a,
				 *y = *(const struct ls_prof_row *const *)b;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns > y->wait_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_value(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void sort_tree(struct node *n)
{
	qsort(n->kid, n->nkid, sizeof *n->kid, by_value);
	for (unsigned i = 0; i < n->nkid; i++)
		sort_tree(n->kid[i]);
}

static void free_tree(struct node *n)
{
	for (unsigned i = 0; i < n->nkid; i++)
		free_tree(n->kid[i]);
	free(n->kid);
	free(n->name);
	free(n);
}

/* ---- folded ---- */

static void folded(FILE *out, const struct node *n, char *path, size_t len, size_t cap)
{
	size_t at = len;
	if (n->kind != K_ROOT) {
		if (len && at < cap - 2)
			path[at++] = ';';
		for (const char *c = n->name; *c && at < cap - 1; c++)
			path[at++] = *c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c;
		path[at] = '\0';
		uint64_t self = n->v;
		for (unsigned i = 0; i < n->nkid; i++)
			self -= n->kid[i]->v;
		if (self)
			fprintf(out, "%s %" PRIu64 "\n", path, self);
	}
	for (unsigned i = 0; i < n->nkid; i++)
		folded(out, n->kid[i], path, at, cap);
}

int flame_folded(FILE *out, const struct ls_prof *p, enum flame_weight w)
{
	struct node *root = program_tree(p, w);
	sort_tree(root);
	size_t cap = 1 << 16;
	char *path = xalloc(cap);
	folded(out, root, path, 0, cap);
	free(path);
	free_tree(root);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* ---- SVG ---- */

enum {
	WIDTH = 1200,  /* px */
	PAD = 10,      /* left and right margins */
	FRAME_H = 17,  /* a frame's height */
	TITLE_H = 22,  /* a graph's title line */
	NOTE_H = 16,   /* the line under a title */
	GAP = 14,      /* between graphs */
	FONT_PX = 11,  /* frames' text: monospace, so its width is known */
	CHAR_W10 = 67, /* a character's advance, in tenths of a px (0.6 em: DejaVu Sans Mono) */
	MIN_W100 = 10, /* frames narrower than 0.1 px are not drawn */
};

static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n')
				fputc(*s, out);
		}
	}
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void colour(const struct node *n, char *buf, size_t size)
{
	uint32_t h = hash(n->name);
	unsigned a = h % 1000, b = (h / 1000) % 1000, c = (h / 1000000) % 1000;
	switch (n->kind) {
	case K_ROOT:
		snprintf(buf, size, "rgb(214,214,214)");
		break;
	case K_NONAME:
		snprintf(buf, size, "rgb(%u,%u,%u)", 165 + a * 30 / 1000, 165 + a * 30 / 1000,
			 170 + a * 30 / 1000);
		break;
	case K_MUTEX:
		snprintf(buf, size, "rgb(%u,%u,%u)", 80 + a * 60 / 1000, 140 + b * 60 / 1000,
			 215 + c * 40 / 1000);
		break;
	default: /* FlameGraph's "hot" */
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + a * 50 / 1000, b * 230 / 1000, c * 55 / 1000);
	}
}

/* "12.345 ms", "1.2 s", "870 ns" */
static void amount(char *buf, size_t size, uint64_t v, bool ns)
{
	if (!ns)
		snprintf(buf, size, "%" PRIu64, v);
	else if (v >= 1000000000)
		snprintf(buf, size, "%.3f s", v / 1e9);
	else if (v >= 1000000)
		snprintf(buf, size, "%.3f ms", v / 1e6);
	else if (v >= 1000)
		snprintf(buf, size, "%.3f us", v / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 " ns", v);
}

static unsigned depth(const struct node *n)
{
	unsigned d = 0;
	for (unsigned i = 0; i < n->nkid; i++) {
		unsigned k = depth(n->kid[i]) + 1;
		d = k > d ? k : d;
	}
	return d;
}

struct graph {
	FILE *out;
	const struct node *root;
	unsigned top_y, levels; /* y of the topmost level; levels drawn */
	bool ns;		/* values are ns (else counts) */
	const char *n_what;	/* what n counts: "waits", "acquisitions" */
};

/* The node, at x100 (hundredths of a px) from the left, depth d. */
static void frame_svg(const struct graph *g, const struct node *n, uint64_t x100, unsigned d)
{
	uint64_t span = (WIDTH - 2 * PAD) * 100ull;
	uint64_t w100 = (uint64_t)((double)n->v / (double)g->root->v * (double)span);
	if (w100 < MIN_W100)
		return;
	FILE *out = g->out;
	unsigned y = g->top_y + (g->levels - 1 - d) * FRAME_H;
	char fill[32], v[64], share[32];
	colour(n, fill, sizeof fill);
	amount(v, sizeof v, n->v, g->ns);
	snprintf(share, sizeof share, "%.2f%%", 100.0 * (double)n->v / (double)g->root->v);
	fprintf(out, "<g class=\"f\" data-d=\"%u\"><title>", d);
	xml(out, n->name);
	fprintf(out, "\n%s (%s)", v, share);
	if (g->ns)
		fprintf(out, ", %" PRIu64 " %s", n->n, g->n_what);
	if (n->line) {
		fputs(n->lines ? "\nat " : "\n", out);
		xml(out, n->line);
		if (n->lines)
			fputs(" and other lines", out);
	}
	fprintf(out,
		"</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"%s\" rx=\"2\"/>"
		"<text x=\"%.2f\" y=\"%u\">",
		PAD + x100 / 100.0, y, w100 / 100.0, FRAME_H - 1, fill, PAD + x100 / 100.0 + 3,
		y + FRAME_H - 5);
	/* as many characters as fit, with ".." when cut */
	size_t fit = w100 > 600 ? (size_t)((w100 - 600) * 10 / (CHAR_W10 * 100)) : 0;
	size_t len = strlen(n->name);
	if (len <= fit) {
		xml(out, n->name);
	} else if (fit >= 3) {
		char *cut = xstrdup(n->name);
		strcpy(cut + fit - 2, "..");
		xml(out, cut);
		free(cut);
	}
	fputs("</text></g>\n", out);
	for (unsigned i = 0; i < n->nkid; i++) {
		frame_svg(g, n->kid[i], x100, d + 1);
		x100 += (uint64_t)((double)n->kid[i]->v / (double)g->root->v * (double)span);
	}
}

/* A graph with its title (and a note under it, or NULL) at y; returns the
 * y below it. */
static unsigned graph_svg(FILE *out, unsigned y, const char *title, const char *note, const struct node *root,
			  bool ns, const char *n_what)
{
	fputs("<g class=\"graph\">\n<text class=\"title\" x=\"10\" y=\"", out);
	fprintf(out, "%u\">", y + 15);
	xml(out, title);
	fputs("</text>\n", out);
	y += TITLE_H;
	if (note) {
		fprintf(out, "<text class=\"note\" x=\"10\" y=\"%u\">", y + 10);
		xml(out, note);
		fputs("</text>\n", out);
		y += NOTE_H;
	}
	if (!root->v) {
		fprintf(
		    out,
		    "<text class=\"none\" x=\"10\" y=\"%u\">nothing to draw: the value is 0</text>\n</g>\n",
		    y + 12);
		return y + FRAME_H + GAP;
	}
	struct graph g = {out, root, y, depth(root) + 1, ns, n_what};
	frame_svg(&g, root, 0, 0);
	fputs("</g>\n", out);
	return y + g.levels * FRAME_H + GAP;
}

/* Zoom: a click on a frame widens it and what is above it to the whole
 * width, and its callers with it; a click on the bottom frame undoes it. */
static const char script[] =
    "<script><![CDATA[\n"
    "(function () {\n"
    "  var W = 1200, PAD = 10, CH = 6.7;\n"
    "  function fit(g, w) {\n"
    "    var t = g.querySelector('text'), name = g.querySelector('title').textContent.split('\\n')[0];\n"
    "    var n = Math.floor((w - 6) / CH);\n"
    "    t.textContent = name.length <= n ? name : n >= 3 ? name.slice(0, n - 2) + '..' : '';\n"
    "  }\n"
    "  function zoom(graph, f) {\n"
    "    var r = f.querySelector('rect'), x0 = +r.dataset.x, w0 = +r.dataset.w, d0 = +f.dataset.d;\n"
    "    var k = (W - 2 * PAD) / w0;\n"
    "    graph.querySelectorAll('g.f').forEach(function (g) {\n"
    "      var q = g.querySelector('rect'), x = +q.dataset.x, w = +q.dataset.w, d = +g.dataset.d;\n"
    "      var inside = x >= x0 - 0.01 && x + w <= x0 + w0 + 0.01, below = d < d0 && x <= x0 + 0.01 && x + w "
    ">= "
    "x0 + w0 - 0.01;\n"
    "      g.style.display = (inside && d >= d0) || below ? '' : 'none';\n"
    "      var nx = below ? PAD : PAD + (x - x0) * k, nw = below ? W - 2 * PAD : w * k;\n"
    "      q.setAttribute('x', nx.toFixed(2)); q.setAttribute('width', nw.toFixed(2));\n"
    "      g.querySelector('text').setAttribute('x', (nx + 3).toFixed(2));\n"
    "      fit(g, nw);\n"
    "    });\n"
    "  }\n"
    "  document.querySelectorAll('g.graph').forEach(function (graph) {\n"
    "    graph.querySelectorAll('g.f').forEach(function (g) {\n"
    "      var q = g.querySelector('rect');\n"
    "      q.dataset.x = q.getAttribute('x'); q.dataset.w = q.getAttribute('width');\n"
    "      g.addEventListener('click', function () { zoom(graph, g); });\n"
    "    });\n"
    "  });\n"
    "})();\n"
    "]]></script>\n";

int flame_svg(FILE *out, const struct ls_prof *p, unsigned top)
{
	/* the graphs first, into memory: the height goes in the header */
	char *body = NULL;
	size_t body_len = 0;
	FILE *b = open_memstream(&body, &body_len);
	if (!b)
		return -1;
	char title[4096], v[64], v2[64];
	unsigned y = 48;

	struct node *all = program_tree(p, FLAME_WAIT);
	sort_tree(all);
	amount(v, sizeof v, all->v, true);
	snprintf(title, sizeof title, "Wait time by call stack, whole program: %s in %" PRIu64 " waits", v,
		 all->n);
	y = graph_svg(
	    b, y, title,
	    "waits: contended acquisitions and timed attempts that timed out; the top frame is the mutex "
	    "waited for",
	    all, true, "waits");
	free_tree(all);

	/* the locks that waited most, whatever their kind */
	unsigned nl = nlocks(p), shown = 0;
	const struct ls_prof_row **order = xalloc((nl ? nl : 1) * sizeof *order);
	for (unsigned i = 0; i < nl; i++)
		order[i] = lock_at(p, i);
	qsort(order, nl, sizeof *order, by_wait);
	for (unsigned i = 0; i < nl && shown < top; i++) {
		const struct ls_prof_row *r = order[i];
		if (!r->wait_ns)
			continue;
		shown++;
		struct node *root = node_new(mutex_name(p, r, ""), K_MUTEX);
		add_sites(root, p, r, false, false);
		root->v = r->wait_ns;
		root->n = waits(r);
		sort_tree(root);
		amount(v, sizeof v, r->wait_ns, true);
		amount(v2, sizeof v2, r->hold_ns, true);
		snprintf(title, sizeof title,
			 "%s: wait %s by call stack, %" PRIu64 " waits; held %s in %" PRIu64 " acquisitions",
			 root->name, v, waits(r), v2, ls_prof_acquired(r));
		y = graph_svg(b, y, title, NULL, root, true, "waits");
		free_tree(root);
	}

	free(order);

	struct node *hold = program_tree(p, FLAME_HOLD);
	sort_tree(hold);
	amount(v, sizeof v, hold->v, true);
	snprintf(title, sizeof title,
		 "Hold time by mutex, under the stack that created it: %s in %" PRIu64 " acquisitions", v,
		 hold->n);
	y = graph_svg(
	    b, y, title,
	    "hold time is recorded per mutex, not per stack: the profiler takes a stack only when an "
	    "acquisition waits",
	    hold, true, "acquisitions");
	free_tree(hold);
	if (fclose(b) != 0) {
		free(body);
		return -1;
	}

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
		"viewBox=\"0 0 %d %u\">\n"
		"<style>\n"
		"text { font-family: 'DejaVu Sans Mono', monospace; font-size: %dpx; fill: #000; }\n"
		"text.head { font-size: 13px; } text.title { font-size: 12px; font-weight: bold; }\n"
		"text.note { font-size: 11px; fill: #444; }\n"
		"g.f { cursor: pointer; } g.f:hover rect { stroke: #000; stroke-width: 0.6; }\n"
		"g.f text { pointer-events: none; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fdfdf6\"/>\n"
		"<text class=\"head\" x=\"10\" y=\"20\">",
		WIDTH, y, WIDTH, y, FONT_PX);
	char dur[64];
	amount(dur, sizeof dur, p->h.duration_ns, true);
	fputs("lockswap report: ", out);
	xml(out, p->h.program ? p->h.program : "?");
	fprintf(out, " (pid %d), algorithm ", p->h.pid);
	xml(out, p->h.algo ? p->h.algo : "?");
	fputs(", wait ", out);
	xml(out, p->h.wait ? p->h.wait : "?");
	fprintf(out, ", %s, %" PRIu64 " threads</text>\n", dur, p->h.threads);
	fputs("<text x=\"10\" y=\"38\">width: time (or count); the bottom frame is the whole, callers below "
	      "their "
	      "callees; click a frame to zoom, the bottom frame to zoom out</text>\n",
	      out);
	fwrite(body, 1, body_len, out);
	free(body);
	fputs(script, out);
	fputs("</svg>\n", out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
