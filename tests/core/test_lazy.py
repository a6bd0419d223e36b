"""judged.core.lazy: a module imported on first use survives pickling and copying (Spark ships
worker functions with their module globals, among them ``pc = lazy("pyarrow.compute")``)."""

import copy
import pickle

import pytest

from judged.core.lazy import lazy


def test_a_lazy_module_reads_its_attributes():
    json = lazy("json")
    assert json.dumps([1]) == "[1]"
    assert "json" in repr(json)


@pytest.mark.parametrize("clone", [lambda m: pickle.loads(pickle.dumps(m)), copy.copy, copy.deepcopy])
def test_a_lazy_module_survives_pickling_and_copying(clone):
    unused, used = lazy("json"), lazy("json")
    used.dumps  # noqa: B018 - imported and cached before the copy
    for module in (unused, used):
        again = clone(module)
        assert isinstance(again, lazy)
        assert again.dumps({"a": 1}) == '{"a": 1}'


def test_a_dunder_the_module_lacks_is_an_attribute_error():
    with pytest.raises(AttributeError):
        lazy("json").__setstate__  # noqa: B018
