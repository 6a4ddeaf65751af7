"""``host_device_flags``: numpyro's chains get one CPU host device each, a user's flag wins."""

from __future__ import annotations

from evalbayes.inference import host_device_flags


def test_adds_one_host_device_per_chain():
    assert host_device_flags("", 4) == "--xla_force_host_platform_device_count=4"
    assert host_device_flags("--xla_cpu_enable_fast_math=false", 2) == (
        "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=2"
    )


def test_keeps_a_device_count_the_user_set():
    flags = "--xla_force_host_platform_device_count=8"
    assert host_device_flags(flags, 4) == flags
