"""Issue 40's peer, measured by hand: one CLI apply process vs one confluent-kafka floor process
(confluent_floor.py) per round, alternating which goes first, each on fresh topics (8 partitions,
120 records each, a plan at the end taken by the CLI's marker and plan commands).

Usage: run.py BOOTSTRAP CLI ROUNDS OUT_DIR (with a Python that has confluent-kafka, e.g. the
Python embedding's venv)."""
import json, os, subprocess, sys, time, statistics
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

B = sys.argv[1]; CLI = sys.argv[2]; ROUNDS = int(sys.argv[3]); OUT = sys.argv[4]
PY = sys.executable
os.makedirs(OUT, exist_ok=True)
admin = AdminClient({"bootstrap.servers": B})
stamp = str(int(time.time()))
def topic(name):
    return f"peer-{name}-{stamp}"
def make(name, partitions, compact=False):
    cfg = {"cleanup.policy": "compact"} if compact else {"cleanup.policy": "compact,delete", "retention.ms": "-1", "retention.bytes": "-1"}
    for f in admin.create_topics([NewTopic(name, partitions, 1, config=cfg)]).values():
        f.result()
prod = Producer({"bootstrap.servers": B, "linger.ms": 5})
sets = []
for r in range(ROUNDS + 1):
    pair = []
    for side in ("c", "f"):
        data = topic(f"{side}{r}"); control = data + "-control"
        make(data, 8); make(control, 1, compact=True)
        for p in range(8):
            for i in range(120):
                prod.produce(data, value=b"x" * 100, key=str(i).encode(), partition=p)
        pair.append((data, control))
    sets.append(pair)
prod.flush(60)
time.sleep(2)
plans = []
for r, pair in enumerate(sets):
    row = []
    for data, control in pair:
        marker = os.path.join(OUT, data + ".marker.json")
        plan = os.path.join(OUT, data + ".plan.json")
        with open(marker, "w") as f:
            subprocess.run([CLI, "marker", "--topic", data, "--bootstrap-servers", B], stdout=f, check=True)
        subprocess.run([CLI, "plan", "--markers", marker, "--recovery-point", "P", "--output", plan, "--json"], check=True, stdout=subprocess.DEVNULL)
        row.append((data, control, plan))
    plans.append(row)

def cli(data, control, plan):
    t = time.perf_counter()
    out = subprocess.run([CLI, "apply", "--plan", plan, "--control-topic", control, "--bootstrap-servers", B, "--yes", "--json"], capture_output=True)
    took = time.perf_counter() - t
    if out.returncode: raise SystemExit(out.stdout.decode() + out.stderr.decode())
    return took
def floor(data, control, plan):
    t = time.perf_counter()
    out = subprocess.run([PY, os.path.join(os.path.dirname(__file__), "confluent_floor.py"), B, data, control, plan], capture_output=True)
    took = time.perf_counter() - t
    if out.returncode: raise SystemExit(out.stderr.decode())
    sys.stderr.write(out.stderr.decode())
    return took, out.stdout.decode().strip()

cli(*plans[0][0]); floor(*plans[0][1])
c, f, inner = [], [], []
for r in range(1, ROUNDS + 1):
    (cd, cc, cp), (fd, fc, fp) = plans[r]
    if r % 2:
        ft, fi = floor(fd, fc, fp); c.append(cli(cd, cc, cp))
    else:
        c.append(cli(cd, cc, cp)); ft, fi = floor(fd, fc, fp)
    f.append(ft); inner.append(float(fi))
ms = lambda xs: f"{statistics.median(xs)*1000:.1f} ms ({min(xs)*1000:.1f}-{max(xs)*1000:.1f})"
print("load", open("/proc/loadavg").read().strip())
print("CLI process         ", ms(c))
print("confluent floor proc", ms(f))
print("floor's Kafka work  ", ms(inner))
print("ratio CLI/floor     ", f"{statistics.median(c)/statistics.median(f):.2f}x")
