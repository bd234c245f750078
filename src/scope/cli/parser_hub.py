"""The results hub's commands (issue 53), declared as cli/parser.py declares the others: `scope
push` (the client: standard library only) and `scope hub serve | token` (the server: the hub
extra, pip install 'scope-bench[hub]'), bound to their handlers in cli/hubcmd.py and cli/hubservecmd.py."""

from __future__ import annotations

import argparse

from scope.cli.argtypes import Parser, command, fraction, given, host_share, pair_share, public_url, whole

URL_HELP = "the database: a path or sqlite:///PATH (default $SCOPE_HUB_DB or ~/.local/share/scope/hub.db), or postgresql://USER@HOST/DB"


def push_options(p: argparse.ArgumentParser, flag: str = "--hub") -> None:
    """Where a run goes and with which token: `push` names the hub --hub, `run` and `submit` --push."""
    p.add_argument(
        flag, metavar="URL", type=given("a hub's address, e.g. https://hub.example.org"), help="the hub to push to"
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        type=given("a file holding the cluster's push token"),
        help="the cluster's push token (default $SCOPE_HUB_TOKEN; never on the command line, where ps shows it)",
    )
    p.add_argument(
        "--cluster",
        type=given("the cluster's name on the hub"),
        help="the cluster the token must push to (refused by the hub when the token is another's)",
    )


def add_sim_commands(sub) -> None:
    sm = command(sub, "sim", "scope.cli.simcmd:cmd_sim", help="simulated clusters: write a SimGrid platform, check one")
    ss = sm.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    pf = ss.add_parser(
        "platform",
        help="a SimGrid platform for a described cluster, or calibrated from runs (then scope run --sim FILE)",
    )
    pf.add_argument(
        "--from",
        dest="sources",
        action="append",
        default=[],
        metavar="RUN",
        help="calibrate from this stored run's p2p.pingpong, p2p.stream, p2p.pingping, p2p.loggp, node.dgemm and "
        "p2p.allpairs (repeatable; 'last'); --hosts, --rate and --latency then change the measured cluster "
        "(docs/sim.md)",
    )
    pf.add_argument("--hosts", type=whole(1, "hosts", 1 << 20), help="hosts (nodes); with --from, the run's by default")
    pf.add_argument(
        "--cores", type=whole(1, "cores a host", 4096), help="cores a host (default 1; with --from, the run's)"
    )
    pf.add_argument(
        "--rate",
        type=given("a rate, e.g. 100Gbps"),
        help="each link's rate (default 10Gbps); with --from, xK scales the calibrated rate",
    )
    pf.add_argument(
        "--latency",
        type=given("a time, e.g. 1us"),
        help="each link's latency (default 1us); with --from, xK scales the calibrated latency",
    )
    pf.add_argument(
        "--topology", choices=["flat", "fattree"], default="flat", help="one switch, or a two-level fat tree"
    )
    pf.add_argument(
        "--slow",
        action="append",
        default=[],
        metavar="HOST:SHARE",
        type=host_share,
        help="flat only: host HOST's link (0-based) at SHARE of --rate, e.g. 17:0.25 (repeatable; a planted slow link)",
    )
    pf.add_argument(
        "--slow-link",
        action="append",
        default=[],
        metavar="I-J:SHARE",
        type=pair_share,
        help="flat only, 256 hosts at most: the route between hosts I and J at SHARE of --rate, both ways, e.g. "
        "3-7:0.25 (repeatable; every route written)",
    )
    pf.add_argument("-o", "--output", required=True, type=given("a file"), help="the platform file to write")
    ck = ss.add_parser(
        "check", help="simulate a run's tests on a platform calibrated from it, and compare point by point"
    )
    ck.add_argument("run", help="the measured run (an id, or 'last')")
    ck.add_argument(
        "--from", dest="sources", action="append", default=[], metavar="RUN",
        help="calibrate from these runs instead of the run itself (repeatable)",
    )  # fmt: skip
    ck.add_argument("--platform", type=given("a SimGrid platform file"), help="simulate on this platform instead")
    ck.add_argument(
        "--tolerance",
        type=fraction(1000.0),
        default=5.0,
        metavar="PCT",
        help="a point is within it or not (default 5 %%)",
    )
    ck.add_argument(
        "--sim-cfg", action="append", default=[], metavar="KEY:VALUE",
        help="a SimGrid setting for the simulation (repeatable), e.g. smpi/bcast:binomial_tree",
    )  # fmt: skip
    ck.add_argument("--json", action="store_true", help="the comparison as JSON")
    ck.add_argument("--page", type=given("a file"), help="also write the comparison as a page (HTML, its plots inline)")
    ck.add_argument("-o", "--output", type=given("a file"), help="also keep the calibrated platform in this file")


def add_hub_commands(sub) -> None:
    pu = command(sub, "push", "scope.cli.hubcmd:cmd_push", help="upload stored runs to a results hub (scope hub)")
    pu.add_argument("runs", nargs="+", help="run ids, or 'last'")
    push_options(pu)
    pu.add_argument(
        "--timeout", type=whole(1, "seconds", 3600), default=120, help="seconds to wait for the hub (default 120)"
    )
    pu.add_argument(
        "--no-samples", dest="keep_samples", action="store_false",
        help="leave each point's raw samples out (its statistics stay); the hub says they were left out",
    )  # fmt: skip

    hb = command(
        sub, "hub", "scope.cli.hubservecmd:cmd_hub", help="a results hub many clusters push to: serve it, give tokens"
    )
    hs = hb.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    sv = hs.add_parser("serve", help="serve the hub (web pages and JSON API) until stopped")
    sv.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    sv.add_argument(
        "--host", default="127.0.0.1", type=given("an address to listen on"), help="address (default 127.0.0.1)"
    )
    sv.add_argument("--port", type=whole(0, "a TCP port", 65535), default=8470, help="TCP port (default 8470)")
    sv.add_argument(
        "--workers", type=whole(1, "a number of processes", 64), default=1, help="worker processes (default 1)"
    )
    sv.add_argument(
        "--private", action="store_true", help="reading needs a read token too ('scope hub token add --read')"
    )
    sv.add_argument(
        "--max-upload-mb", type=whole(1, "MiB", 4096), default=64, help="the largest push accepted, MiB (default 64)"
    )
    sv.add_argument(
        "--public-url",
        type=public_url,
        metavar="URL",
        help="the address readers reach the hub at, e.g. https://hub.example.org (links in answers; default: paths)",
    )
    tk = hs.add_parser("token", help="push tokens (one cluster each), read tokens and admin tokens")
    ts = tk.add_subparsers(dest="token_action", metavar="ACTION", parser_class=Parser)
    ta = ts.add_parser("add", help="make a token and print it once (the hub keeps only its hash)")
    ta.add_argument("cluster", nargs="?", help="the cluster this token pushes to (made if new)")
    ta.add_argument("--read", action="store_true", help="a read token (for a --private hub), of no cluster")
    ta.add_argument(
        "--admin", action="store_true", help="an admin token: every cluster's alert rules and events by the API"
    )
    ta.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    tr = ts.add_parser("revoke", help="revoke a token by its id (scope hub token list)")
    tr.add_argument("id", type=whole(1, "a token id", 1 << 62), help="the token's id")
    tr.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    tl = ts.add_parser("list", help="every token: id, kind, cluster, made, revoked (never the token)")
    tl.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    add_alert_commands(hs)


def add_alert_commands(hs) -> None:
    """`scope hub alert add|list|remove`: where a cluster's alerts go (issue 71)."""
    al = hs.add_parser("alert", help="where a cluster's alerts go: a webhook, Slack/Mattermost, e-mail")
    aa = al.add_subparsers(dest="alert_action", metavar="ACTION", parser_class=Parser)
    ad = aa.add_parser("add", help="send a cluster's alerts to a webhook, a Slack/Mattermost webhook or an address")
    ad.add_argument("cluster", help="the cluster (made if new)")
    to = ad.add_mutually_exclusive_group(required=True)
    to.add_argument("--webhook", metavar="URL", type=given("an http(s) address"),
                    help="POST each alert as JSON; a secret in it only as ${VAR}, set where the hub runs")  # fmt: skip
    to.add_argument("--slack", metavar="URL", type=given("an incoming-webhook address"),
                    help="a Slack or Mattermost incoming webhook ({\"text\": ...}); e.g. "
                         "https://hooks.slack.com/services/${SLACK_HOOK}")  # fmt: skip
    to.add_argument("--email", metavar="ADDRESS", type=given("an e-mail address"),
                    help="mail each alert through the hub's relay, $SCOPE_HUB_SMTP=HOST:PORT")  # fmt: skip
    ad.add_argument("--max-slowdown", default="5%", help="alert past this slowdown (default 5%%)")
    ad.add_argument("--quiet", metavar="HH:MM-HH:MM", type=given("quiet hours, e.g. 22:00-06:00"),
                    help="quiet hours in UTC: what is raised then is sent when they end")  # fmt: skip
    ad.add_argument("--tests", metavar="PREFIX,...", type=given("test name prefixes, e.g. p2p.,coll.allreduce"),
                    help="only these tests (name prefixes, comma-separated; default every test)")  # fmt: skip
    ad.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    ls = aa.add_parser("list", help="every live rule: id, cluster, channel, threshold (targets' secrets never shown)")
    ls.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    rm = aa.add_parser("remove", help="remove a rule by its id (scope hub alert list)")
    rm.add_argument("id", type=whole(1, "a rule id", 1 << 62), help="the rule's id")
    rm.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
    ev = hs.add_parser("event", help="announce a cluster's maintenance, upgrade or swap (or list its events)")
    ev.add_argument("cluster", help="the cluster (made if new)")
    ev.add_argument("text", nargs="?", help='what happens, e.g. "MPICH 4.2 -> 5.0" (none: list the events)')
    ev.add_argument("--at", metavar="TIME", type=given("a time, e.g. 2026-12-05T03:00"),
                    help="when, ISO 8601, UTC unless an offset is given (default now)")  # fmt: skip
    ev.add_argument("--bound", metavar="SLOWDOWN", type=given("a slowdown, e.g. 30%"),
                    help="the slowdown it may cost: an alert across it past this stays open (default any)")  # fmt: skip
    ev.add_argument("--remove", metavar="ID", type=whole(1, "an event id", 1 << 62), help="remove event ID")
    ev.add_argument("--db", dest="hub_db", metavar="URL", type=given("a database path or URL"), help=URL_HELP)
