defmodule RustyJson.Native.Gate do
  @moduledoc false
  # Whether the NIF's fast paths may engage: a pure function of the running OTP release, `RUSTYJSON_FAST_PATHS`
  # and `config :rusty_json, fast_paths:`, which `RustyJson.Native` calls once at load and hands to the NIF.
  #
  # The fast paths read and write term memory by layouts learned from the running VM (native/rustyjson_nif/src/
  # term/). The probes check every fact they rely on, but a release with a layout no probe has met could pass them
  # and corrupt a heap in production, so they engage only on the releases they were proved on (issue 55):
  #
  #   * 25: CI, the host's release (`make test`: the whole suite with fast paths on, and again off).
  #   * 26: OTP 26.2.5 built from source beside CI, with Elixir 1.17.3 and 1.19.4: the whole suite with all fast
  #     paths on and off, parity with live Jason 49573/49573 (not in CI: no Debian suite ships it).
  #   * 27: CI's version matrix, Debian trixie (Elixir 1.18; `scripts/test-matrix trixie`).
  #   * 28: in no Debian suite and not built here; it lies between 27 and 29, whose layouts are the same in every
  #     fact the probes learn, and the published RustyJson's own report ran on it.
  #   * 29: CI's version matrix, Debian sid (Elixir 1.20; `scripts/test-matrix sid`).
  #
  # A later release stays on the plain erl_nif calls (same results, slower) until it is tested and added here;
  # `RUSTYJSON_FAST_PATHS=on` or `config :rusty_json, fast_paths: :on` engages them knowingly (the layouts are
  # still learned and checked, as on every release). `RUSTYJSON_FAST_PATHS=off` switches them off everywhere.

  @tested 25..29

  @typedoc "Why the fast paths are on or off."
  @type reason :: :tested_release | {:untested_release, String.t()} | :forced_off | :forced_on

  @doc """
  The gate for `otp_release` (as `:erlang.system_info(:otp_release)` names it), the value of
  `RUSTYJSON_FAST_PATHS` (nil when unset) and `config :rusty_json, fast_paths:` (`:on`, `:off`, or nil):
  `{open?, reason}`. The environment variable wins over the config (an operator's switch on one VM); `off` wins
  over everything; values other than `on`/`off` (any case) leave the decision to the release.

      iex> RustyJson.Native.Gate.decide("27", nil, nil)
      {true, :tested_release}
      iex> RustyJson.Native.Gate.decide("30", nil, nil)
      {false, {:untested_release, "30"}}
      iex> RustyJson.Native.Gate.decide("30", "on", nil)
      {true, :forced_on}
  """
  @spec decide(String.t(), String.t() | nil, atom()) :: {boolean(), reason()}
  def decide(otp_release, env, config) when is_binary(otp_release) do
    case setting(env) || setting(config) do
      :off -> {false, :forced_off}
      :on -> {true, :forced_on}
      nil -> by_release(otp_release)
    end
  end

  defp setting(nil), do: nil
  defp setting(value) when value in [:on, :off], do: value

  defp setting(value) when is_binary(value) do
    case String.downcase(value) do
      "on" -> :on
      "off" -> :off
      _ -> nil
    end
  end

  defp setting(_), do: nil

  defp by_release(otp_release) do
    case Integer.parse(otp_release) do
      {release, ""} when release in @tested -> {true, :tested_release}
      _ -> {false, {:untested_release, otp_release}}
    end
  end

  @doc """
  The line logged at load when `reason` keeps the fast paths off on a release they were not tested on; nil for
  every other reason.
  """
  @spec warning(reason()) :: String.t() | nil
  def warning({:untested_release, release}) do
    "RustyJson: fast paths off on Erlang/OTP #{release}: they read and write term memory by layouts tested on " <>
      "OTP #{@tested.first}-#{@tested.last} only (results are the same, slower). To engage them knowingly, " <>
      "set RUSTYJSON_FAST_PATHS=on or `config :rusty_json, fast_paths: :on` (RustyJson.Native.info/0 shows " <>
      "which are on)."
  end

  def warning(_reason), do: nil
end
