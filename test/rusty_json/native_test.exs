defmodule RustyJson.NativeTest do
  use ExUnit.Case, async: true

  @moduletag :tmp_dir

  test "the NIF library is loaded (a failed load is only a warning at compile time)" do
    assert RustyJson.Native.load_error() == nil
    assert RustyJson.Native.loaded?()
  end

  test "without its library the module says so clearly and how to rebuild", %{tmp_dir: tmp} do
    # A copy of the compiled modules with no priv/ beside them, run in a separate VM.
    ebin = Path.join([tmp, "rusty_json", "ebin"])
    File.mkdir_p!(ebin)
    File.cp_r!(Path.dirname(:code.which(RustyJson)), ebin)

    {output, status} =
      System.cmd("elixir", ["-pa", ebin, "-e", "RustyJson.encode!(1)"], stderr_to_stdout: true)

    assert status != 0

    assert output =~
             "could not load the RustyJson NIF from #{tmp}/rusty_json/priv/native/rustyjson_nif.so"

    assert output =~ "mix compile --force"
    assert output =~ "rusty_json_nif_not_loaded"
  end
end
