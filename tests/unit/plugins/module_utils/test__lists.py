"""module_utils/_lists.py."""

from ansible_collections.ascendfleet.llm.plugins.module_utils._lists import unique


def test_unique_keeps_the_first_of_equal_items_in_order_dicts_too():
    qwen = {"model": "Qwen/Qwen3.5-27B", "revision": "master"}
    assert unique([qwen, {"model": "Qwen/Qwen3-8B"}, dict(qwen), qwen]) == [qwen, {"model": "Qwen/Qwen3-8B"}]
    assert unique(c for c in "abcab") == ["a", "b", "c"]
    assert unique([]) == []
