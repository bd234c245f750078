"""The report's fixed parts: its sections by SCOPE level with the published work behind each,
the references, the style (shared with scope tune's page) and the self-check a headless browser
reads."""

from __future__ import annotations

from markupsafe import Markup

# Titles of SCOPE's levels (the level is the engine's, from the test descriptor) and the
# published work their methods and models come from.
LEVELS = {
    "node": ("Single node", "McCalpin 1995 (STREAM); Dongarra et al. 1990 (level-3 BLAS)"),
    "shm": ("User-level channel", "Hockney 1994 (t0, r∞, n½)"),
    "net": ("Network level", "Hockney 1994"),
    "p2p": ("MPI point-to-point (library level)", "Hockney 1994; Alexandrov et al. 1995 (LogGP)"),
    "coll": ("Collectives", "Thakur, Rabenseifner & Gropp 2005; Hunold & Carpen-Amarie 2016 (window timing)"),
    "rma": ("One-sided communication", "MPI Forum 2012 (MPI-3 RMA); Nieplocha et al. 1996 (Global Arrays)"),
    "io": ("Parallel I/O", "Thakur, Gropp & Lusk 1999 (MPI-IO)"),
    "kernel": ("Kernels", "Cannon 1969; Shi & Schaeffer 1992 (PSRS); Briggs, Henson & McCormick 2000 (multigrid)"),
    "app": ("Applications", "Bailey et al. 1991 (NAS Parallel Benchmarks)"),
}

# The published works the report's short citations name.
REFERENCES = [
    "Alexandrov, Ionescu, Schauser & Scheiman (1995). LogGP: incorporating long messages into the LogP model. "
    "SPAA '95.",
    "Bailey et al. (1991). The NAS Parallel Benchmarks. Int. J. Supercomputer Applications 5(3).",
    "Briggs, Henson & McCormick (2000). A Multigrid Tutorial, 2nd ed. SIAM.",
    "Cannon (1969). A cellular computer to implement the Kalman filter algorithm. "
    "PhD thesis, Montana State University.",
    "Dongarra, Du Croz, Hammarling & Duff (1990). A set of level 3 basic linear algebra subprograms. ACM TOMS 16(1).",
    "Hockney (1994). The communication challenge for MPP: Intel Paragon and Meiko CS-2. Parallel Computing 20(3).",
    "Hunold & Carpen-Amarie (2016). Reproducible MPI benchmarking is still not as easy as you think. IEEE TPDS 27(12).",
    "McCalpin (1995). Memory bandwidth and machine balance in current high performance computers. "
    "IEEE TCCA Newsletter.",
    "MPI Forum (2012). MPI: A Message-Passing Interface Standard, version 3.0 (one-sided communication).",
    "Nieplocha, Harrison & Littlefield (1996). Global Arrays: a nonuniform memory access programming model for "
    "high-performance computers. J. Supercomputing 10(2).",
    "Shi & Schaeffer (1992). Parallel sorting by regular sampling. J. Parallel and Distributed Computing 14(4).",
    "Thakur, Gropp & Lusk (1999). On implementing MPI-IO portably and with high performance. IOPADS '99.",
    "Thakur, Rabenseifner & Gropp (2005). Optimization of collective communication operations in MPICH. IJHPCA 19(1).",
]


def cited(levels: list[str], loggp: bool) -> list[str]:
    """The references the report's citations name (issue 70: an OSU import listed all 13): the
    levels it shows, Hockney's model (every summary fits it), LogGP where it was fitted."""
    said = " ".join(LEVELS[lv][1] for lv in levels if lv in LEVELS) + " Hockney 1994"
    said += " Alexandrov 1995" if loggp else ""
    out = []
    for r in REFERENCES:
        author, year = r.split()[0].rstrip(","), r[r.index("(") + 1 : r.index(")")]
        if author in said and year in said:
            out.append(r)
    return out


CSS = Markup(
    "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#1d2330;"
    "background:#f6f7f9}header{background:#1d2d50;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}"
    "header p{margin:4px 0 0;opacity:.8;font-size:13px}main{max-width:1180px;margin:0 auto;padding:12px 32px 48px}"
    "section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);padding:16px 22px;margin:18px 0}"
    "h2{font-size:19px;margin:4px 0 10px;border-bottom:2px solid #e3e7ef;padding-bottom:6px}"
    "h3{font-size:16px;margin:18px 0 6px}table{border-collapse:collapse;font-size:13px;margin:8px 0}"
    "th,td{padding:4px 10px;border-bottom:1px solid #e8ebf0;text-align:right}th{background:#f0f2f6}"
    "td.l,th.l{text-align:left}.warn{background:#fff4e5;border-left:4px solid #f0a020;padding:6px 10px;margin:6px 0;"
    "font-size:13px}.muted{color:#68707f;font-size:12px}img.plot{max-width:100%;height:auto;display:block;"
    "margin:6px 0}nav a{margin-right:14px;font-size:13px}code{background:#f0f2f6;padding:1px 4px;border-radius:3px}"
    # a phone's width: tables scroll inside their section instead of widening the page
    "table{display:block;max-width:100%;overflow-x:auto}p,li{overflow-wrap:anywhere}"
    "@media (max-width:640px){main{padding:6px 8px 24px}header{padding:12px 12px}section{padding:10px 10px}"
    "nav a{display:inline-block;margin:2px 8px 2px 0}}"
)

# Sets data-images-ok on <body> once every plot has decoded: a check a headless browser reads.
SELF_CHECK = Markup(
    "window.addEventListener('load',function(){var im=document.images,ok=true;"
    "for(var i=0;i<im.length;i++){if(!im[i].complete||im[i].naturalWidth===0){ok=false}}"
    "document.body.setAttribute('data-images-ok',ok?'yes':'no');"
    "document.body.setAttribute('data-image-count',String(im.length));"
    "var w=document.documentElement;"
    "document.body.setAttribute('data-overflow',w.scrollWidth>w.clientWidth+1?'yes':'no');"
    # a cell whose text runs past its box (cut, or over its neighbour): its count, and the first
    "var cut=[],c=document.querySelectorAll('td,th,h1,h2,h3,p,summary');"
    "for(var j=0;j<c.length;j++){if(c[j].scrollWidth>c[j].clientWidth+1){cut.push(c[j].textContent.slice(0,60))}}"
    "document.body.setAttribute('data-cut',String(cut.length));"
    "document.body.setAttribute('data-cut-first',cut.length?cut[0]:'');});"
)
