"""Issue 40's peer floor: one apply's Kafka work with confluent-kafka and no checks, in a process
of its own: describe both topics, earliest and latest offsets, init_transactions, one transaction
with the COMMITTED record, DeleteRecords at the plan, one with the APPLIED record.

Usage: confluent_floor.py BOOTSTRAP DATA_TOPIC CONTROL_TOPIC PLAN_FILE
Prints the seconds from before the import to the end on stdout, and each phase on stderr."""
import time

started = time.perf_counter()
laps = []


def lap(name, since=[started]):
    now = time.perf_counter()
    laps.append(f"{name} {(now - since[0]) * 1000:.1f} ms")
    since[0] = now


import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from confluent_kafka import Producer, TopicCollection, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, OffsetSpec  # noqa: E402

lap("import")
bootstrap, data, control, plan_file = sys.argv[1:5]
with open(plan_file) as f:
    plan = json.load(f)
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.describe_topics(TopicCollection([data, control]))[data].result()
lap("describe")
partitions = [TopicPartition(data, int(p)) for p in plan["offsets"]]
for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
    for future in admin.list_offsets({tp: spec for tp in partitions}).values():
        future.result()
lap("list-offsets")
producer = Producer(
    {"bootstrap.servers": bootstrap, "transactional.id": "peer:" + control, "linger.ms": 0}
)
producer.init_transactions(30)
lap("init-transactions")
producer.begin_transaction()
producer.produce(control, key=plan["planId"], value=b'{"status":"COMMITTED"}')
producer.commit_transaction(30)
lap("committed")
deletions = [TopicPartition(data, int(p), o) for p, o in plan["offsets"].items()]
for future in admin.delete_records(deletions).values():
    future.result()
lap("delete-records")
producer.begin_transaction()
producer.produce(control, key=plan["planId"], value=b'{"status":"APPLIED"}')
producer.commit_transaction(30)
lap("applied")
print(time.perf_counter() - started)
sys.stderr.write("floor: " + ", ".join(laps) + "\n")
# As the CLI does: exit without waiting for the clients' threads.
os._exit(0)
