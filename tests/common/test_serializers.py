from __future__ import annotations

import threading

from rest_framework import serializers

from memorypr.common.serializers import Serializer


class _Evidence(Serializer):
    quote = serializers.CharField(max_length=20)


class _Operation(Serializer):
    key = serializers.RegexField(r"^[a-z_]+$", max_length=10)
    tags = serializers.ListField(child=serializers.CharField(max_length=5), required=False)
    evidence = _Evidence()


class _Pull(Serializer):
    subject = serializers.CharField(max_length=10)
    operations = _Operation(many=True)


def _declared(serializer_class: type[Serializer], name: str) -> serializers.Field:
    return serializer_class._declared_fields[name]  # type: ignore[attr-defined]


def test_each_instance_binds_its_own_leaf_fields_and_shares_what_is_only_read():
    # given two instances of one serializer
    first, second = _Pull(data={}), _Pull(data={})
    # when their fields are made
    a, b = first.fields["subject"], second.fields["subject"]
    declared = _declared(_Pull, "subject")
    # then each is bound to its own serializer, and the declared field to none
    assert a is not b and a is not declared
    assert a.parent is first and b.parent is second and a.field_name == "subject"
    assert getattr(declared, "parent", None) is None
    # and what is only read once built (the validators) is shared, not built again per request
    assert a.validators is declared.validators and b.validators is declared.validators


def test_fields_with_fields_inside_are_copied_whole_for_each_instance():
    # given two instances of a serializer with a many=True list of nested serializers
    first, second = _Pull(data={}), _Pull(data={})
    # when their nested fields are made
    first_child = first.fields["operations"].child
    second_child = second.fields["operations"].child
    # then each instance has its own list, child, nested serializer and ListField child, bound inside it
    assert first.fields["operations"] is not second.fields["operations"]
    assert first_child is not second_child
    assert first_child.parent is first.fields["operations"]
    assert first_child.fields["evidence"] is not second_child.fields["evidence"]
    assert first_child.fields["evidence"].parent is first_child
    assert first_child.fields["tags"].child is not second_child.fields["tags"].child
    assert first_child.fields["tags"].child.parent is first_child.fields["tags"]
    assert first.fields["operations"].root is first


def test_errors_and_values_stay_with_their_own_request():
    # given a bad body and a good one, validated one after the other
    bad = _Pull(data={"subject": "x" * 11, "operations": [{"key": "Bad Key", "evidence": {"quote": ""}}]})
    good = _Pull(
        data={"subject": "user", "operations": [{"key": "home", "tags": ["a"], "evidence": {"quote": "hi"}}]}
    )
    # when both are validated
    assert not bad.is_valid()
    assert good.is_valid(), good.errors
    # then each has its own field paths and values, and the bad one's errors did not change
    assert set(bad.errors) == {"subject", "operations"}
    assert set(bad.errors["operations"][0]) == {"key", "evidence"}
    assert good.validated_data["operations"][0]["evidence"] == {"quote": "hi"}
    assert set(bad.errors) == {"subject", "operations"}


def test_instances_validated_on_threads_at_once_keep_their_own_results():
    # given serializers validated at the same time on several threads, half of them with bad input
    results: dict[int, bool] = {}
    barrier = threading.Barrier(8)

    def validate(index: int) -> None:
        key = "good_key" if index % 2 == 0 else "Bad Key"
        serializer = _Pull(
            data={"subject": f"s{index}", "operations": [{"key": key, "evidence": {"quote": "q"}}]}
        )
        barrier.wait()
        for _ in range(50):
            ok = serializer.is_valid()
            serializer = _Pull(data=serializer.initial_data)
        results[index] = ok

    threads = [threading.Thread(target=validate, args=(i,)) for i in range(8)]
    # when they all run
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then each thread's input decided its own result
    assert results == {i: i % 2 == 0 for i in range(8)}
