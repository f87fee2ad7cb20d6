defmodule RustyJson.FormatterTest do
  use ExUnit.Case, async: true
  doctest RustyJson.Formatter

  alias RustyJson.Formatter

  @vectors Path.expand("../../../shared/compat/formatter.etf", __DIR__)

  defp vectors, do: @vectors |> File.read!() |> :erlang.binary_to_term()

  test "every vector of formatter.etf" do
    vectors = vectors()

    failures =
      for {fun, input, opts, expected} <- vectors,
          got = apply(Formatter, fun, [input, opts]),
          got != expected,
          do: {fun, input, opts, expected, got}

    for {fun, _, opts, _, _} <- vectors do
      assert fun in [:pretty_print, :minimize] and is_list(opts)
    end

    IO.puts(
      "formatter.etf: #{length(vectors) - length(failures)}/#{length(vectors)} vectors match"
    )

    assert failures == []
  end

  test "iodata in, iodata out; chunks split anywhere" do
    assert Formatter.pretty_print(["[\"a\\", ?", "\",", [" 1"], "2]"]) ==
             "[\n  \"a\\\"\",\n  12\n]"

    assert IO.iodata_to_binary(Formatter.minimize_to_iodata([~c"[ 1 ,", " 2 ]"])) == "[1,2]"

    assert Formatter.pretty_print_to_iodata("{}", indent: ["\t"]) |> IO.iodata_to_binary() ==
             "{}"
  end

  test "several values, record separator" do
    assert Formatter.pretty_print("[1] [2]", record_separator: "\n\n") == "[\n  1\n]\n\n[\n  2\n]"
    assert Formatter.minimize("{} {}") == "{}\n{}"
    assert Formatter.minimize("{} {}", record_separator: ",") == "{},{}"
  end

  test "large input (dirty scheduler) equals the encoder's pretty output" do
    term = Enum.map(1..20_000, &%{"k" => &1, "l" => [&1, "s"]})

    assert Formatter.pretty_print(RustyJson.encode!(term)) ==
             RustyJson.encode!(term, pretty: true)

    assert Formatter.minimize(RustyJson.encode!(term, pretty: true)) == RustyJson.encode!(term)
  end

  test "bad arguments" do
    # Read at run time: Elixir 1.20's type checker would flag the literal (this test is of the run-time check).
    not_iodata = Process.get(:not_iodata, :nope)
    assert_raise ArgumentError, fn -> Formatter.pretty_print(not_iodata) end
    assert_raise ArgumentError, fn -> Formatter.pretty_print("[]", nope: "x") end
  end
end
