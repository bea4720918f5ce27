# -*- coding: utf-8 -*-
"""Fixtures shared by the plugin tests."""

import pytest

from .module_utils.raw_tcp import RawServer


@pytest.fixture
def raw_server():
    """raw_server(reply, **options) -> a started loopback RawServer; all are closed after the test."""
    servers = []

    def start(reply, **options):
        server = RawServer(reply, **options)
        servers.append(server)
        return server
    yield start
    for server in servers:
        server.close()
