"""The Python host's tables against `wit/types.wit`, the one document every host's tables follow
(the Rust host and the core check theirs in host/tests/error_tables.rs, Java in
KafkaErrorsTableTest): the codes `_kafka_errors.CASES` maps to each `kafka-error` case, and the
`cleanup-error` case names `errors.ERROR_CASES` knows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Tuple

from confluent_kafka import KafkaError

from action_state_cleanup._kafka_errors import CASES
from action_state_cleanup.errors import ERROR_CASES

TYPES_WIT = Path(__file__).resolve().parents[2] / "wit" / "types.wit"

#: NAME (code) in a doc comment: capitals, digits and `_`, then a parenthesis opening on a number.
LISTED_CODE = re.compile(r"\b(_?[A-Z][A-Z0-9_]*) \((-?\d+)")


def variant_body(wit: str, name: str) -> str:
    start = wit.index(f"variant {name} {{")
    return wit[wit.index("{", start) + 1 : wit.index("\n  }", start)]


def variant_cases(wit: str, name: str) -> List[str]:
    lines = (line.strip() for line in variant_body(wit, name).splitlines())
    return [re.split(r"[(,]", line)[0].strip() for line in lines if line and not line.startswith("//")]


def wit_kafka_codes(wit: str) -> Dict[int, Tuple[str, str]]:
    """Code -> (its name, the case whose doc comment lists it)."""
    codes: Dict[int, Tuple[str, str]] = {}
    doc: List[str] = []
    for line in (line.strip() for line in variant_body(wit, "kafka-error").splitlines()):
        if line.startswith("///"):
            doc.append(line[3:])
        elif line:
            case = line.split("(")[0].strip()
            for name, code in LISTED_CODE.findall(" ".join(doc)):
                assert int(code) not in codes, f"code {code} is listed twice"
                codes[int(code)] = (name, case)
            doc = []
    return codes


def test_the_doc_parser_reads_names_and_codes_and_skips_prose():
    wit = TYPES_WIT.read_text()
    codes = wit_kafka_codes(wit)
    assert codes[3] == ("UNKNOWN_TOPIC_OR_PARTITION", "unknown-topic")
    assert codes[-140] == ("_AUTO_OFFSET_RESET", "offset-out-of-range")
    assert "TOPIC_ALREADY_EXISTS" not in {name for name, _ in codes.values()}


def test_cases_maps_exactly_librdkafkas_codes_the_wit_lists_to_their_cases():
    """The host maps librdkafka's own codes; the protocol codes (positive) are the component's to
    classify, by the one table in its core, so none of them is in CASES."""
    wit = TYPES_WIT.read_text()
    listed = {code: case for code, (_, case) in wit_kafka_codes(wit).items() if code < 0}
    ours = {code: case for case, codes in CASES.items() for code in codes}
    assert sum(len(codes) for codes in CASES.values()) == len(ours), "a code is in CASES twice"
    assert ours == listed, "CASES in _kafka_errors.py against wit/types.wit"


def test_cases_names_only_cases_of_the_wit():
    wit = TYPES_WIT.read_text()
    assert set(CASES) < set(variant_cases(wit, "kafka-error")) - {"other"}


def test_librdkafkas_own_codes_are_named_in_the_wit_as_librdkafka_names_them():
    for code, (name, _) in wit_kafka_codes(TYPES_WIT.read_text()).items():
        if code < 0:
            assert KafkaError(code).name() == name


def test_error_cases_knows_every_cleanup_error_case_of_the_wit_and_no_other():
    wit = TYPES_WIT.read_text()
    assert sorted(ERROR_CASES) == sorted(variant_cases(wit, "cleanup-error"))
