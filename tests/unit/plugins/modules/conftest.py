# -*- coding: utf-8 -*-
"""Run the real module entry points in-process with patch_module_args."""

import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_NPU_SMI = os.path.join(HERE, "fixtures", "fake-npu-smi")
FAKE_DOCKER = os.path.join(HERE, "fixtures", "fake-docker")


@pytest.fixture
def run_module(capsys, monkeypatch):
    """run_module(main, args) -> (failed, result dict) from the module's JSON output."""
    for name in ("FAKE_NPU_SMI_SAMPLE", "FAKE_NPU_SMI_RC", "FAKE_NPU_SMI_STDERR",
                 "FAKE_NPU_SMI_LOG", "FAKE_DOCKER_PROJECTS"):
        monkeypatch.delenv(name, raising=False)

    # Modules run as they do on a host. Once anything imports controller code into this process
    # (e.g. a filter test), core 2.19 sends module warnings to the controller's Display instead
    # of the module's JSON result; switch that off so results do not depend on test order.
    from ansible.module_utils import _internal
    monkeypatch.setattr(_internal, "is_controller", False)

    def run(main, args):
        with patch_module_args(args):
            with pytest.raises(SystemExit) as exit_info:
                main()
        result = json.loads(capsys.readouterr().out)
        failed = exit_info.value.code != 0
        assert failed == bool(result.get("failed")), result
        return failed, result
    return run
