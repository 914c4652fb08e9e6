"""The operations settings: log format, metrics token and addresses, checked at start-up."""

from __future__ import annotations

import pytest

from docbase.config import resolve
from docbase.core.errors import ConfigurationError


def test_metrics_are_collected_only_when_someone_may_read_them() -> None:
    assert not resolve().metrics
    assert resolve(metrics_token="a-long-metrics-token").metrics
    assert resolve(environ={"DOCBASE_METRICS_ADDRESSES": "10.1.2.3,::1"}).metrics
    assert resolve(environ={"DOCBASE_METRICS_ADDRESSES": "10.1.2.3,::1"}
                   ).metrics_addresses == ("10.1.2.3", "::1")


@pytest.mark.parametrize(("options", "named"), [
    ({"log_format": "yaml"}, "log_format"),
    ({"metrics_token": "short"}, "metrics_token"),
    ({"metrics_addresses": ("not-an-address",)}, "metrics_addresses"),
])
def test_a_bad_operations_setting_is_refused_by_name(options: dict[str, object],
                                                      named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        resolve(**options)


def test_log_format_comes_from_the_environment() -> None:
    assert resolve(environ={"DOCBASE_LOG_FORMAT": "json"}).log_format == "json"
    assert resolve().log_format == "text"
