defmodule RustyJson.Native.GateTest do
  # The release gate of the fast paths (issue 55): on OTP 25 through 29 only, unless switched on knowingly.
  use ExUnit.Case, async: true

  alias RustyJson.Native.Gate

  doctest Gate

  @moduletag :tmp_dir

  test "the tested releases open it; any later one keeps it shut, with a reason" do
    for release <- ~w(25 26 27 28 29),
        do: assert(Gate.decide(release, nil, nil) == {true, :tested_release})

    for release <- ~w(24 30 31 100 R16B) do
      assert Gate.decide(release, nil, nil) == {false, {:untested_release, release}}
    end
  end

  test "RUSTYJSON_FAST_PATHS and the config open or shut it whatever the release; the variable wins" do
    for release <- ~w(25 29 30) do
      assert Gate.decide(release, "on", nil) == {true, :forced_on}
      assert Gate.decide(release, "ON", nil) == {true, :forced_on}
      assert Gate.decide(release, nil, :on) == {true, :forced_on}
      assert Gate.decide(release, "off", nil) == {false, :forced_off}
      assert Gate.decide(release, "Off", :on) == {false, :forced_off}
      assert Gate.decide(release, nil, :off) == {false, :forced_off}
      assert Gate.decide(release, "on", :off) == {true, :forced_on}
    end

    # Anything else leaves it to the release.
    assert Gate.decide("30", "yes", nil) == {false, {:untested_release, "30"}}
    assert Gate.decide("27", "", :maybe) == {true, :tested_release}
  end

  test "only an untested release has a warning, which says how to opt in" do
    message = Gate.warning({:untested_release, "30"})
    assert message =~ "fast paths off on Erlang/OTP 30"
    assert message =~ "RUSTYJSON_FAST_PATHS=on"
    assert message =~ "config :rusty_json, fast_paths: :on"

    for reason <- [:tested_release, :forced_on, :forced_off],
        do: assert(Gate.warning(reason) == nil)
  end

  test "info/0 reports the running VM's gate" do
    info = RustyJson.Native.info()

    expected = Gate.decide(info.otp_release, System.get_env("RUSTYJSON_FAST_PATHS"), nil)

    assert {info.fast_paths_gate == :on, info.fast_paths_reason} == expected
  end

  test "a VM of a release newer than any tested (faked for the gate) keeps every fast path off, says why once, " <>
         "and RUSTYJSON_FAST_PATHS=on opts in",
       %{tmp_dir: tmp} do
    ebin = Path.dirname(:code.which(RustyJson))

    script = ~S"""
    info = RustyJson.Native.info()
    results = {RustyJson.decode!(~s({"a":[1,2.5,"x"]})), RustyJson.encode!(Map.new(1..40, &{"k#{&1}", &1}))}
    File.write!(System.fetch_env!("OUT"), :erlang.term_to_binary({info, results}))
    """

    run = fn env ->
      out = Path.join(tmp, "out_#{length(env)}")
      env = [{"OUT", out}, {"RUSTYJSON_GATE_OTP_RELEASE", "30"} | env]

      {output, status} =
        System.cmd("elixir", ["-pa", ebin, "-e", script], env: env, stderr_to_stdout: true)

      assert status == 0, output
      {output, :erlang.binary_to_term(File.read!(out))}
    end

    {output, {info, results}} = run.([{"RUSTYJSON_FAST_PATHS", nil}])
    assert info.fast_paths_gate == :off
    assert info.fast_paths_reason == {:untested_release, "30"}
    assert Enum.all?(info.fast_paths, fn {_, on?} -> on? == false end), inspect(info.fast_paths)
    # One line at load, saying why and how to opt in.
    assert length(String.split(output, "fast paths off on Erlang/OTP 30")) == 2, output
    assert output =~ "RUSTYJSON_FAST_PATHS=on"

    {output, {info, ^results}} = run.([{"RUSTYJSON_FAST_PATHS", "on"}])
    refute output =~ "fast paths off"
    assert info.fast_paths_gate == :on
    assert info.fast_paths_reason == :forced_on
    assert Enum.all?(info.fast_paths, fn {_, on?} -> on? end), inspect(info.fast_paths)
  end
end
