defmodule RustyJson.HelpersTest do
  use ExUnit.Case, async: true
  doctest RustyJson.Helpers
  doctest RustyJson.Sigil

  import RustyJson.Helpers
  import RustyJson.Sigil

  alias RustyJson.{Encode, EncodeError}
  alias RustyJson.Test.{Derived, Money}

  import RustyJson.Test.Expect, only: [derived: 2]

  # A value the compiler's type checker cannot see into (Elixir 1.18+ would flag the failing match on purpose
  # in `json_map_take/2`'s error case).
  defp opaque(term), do: :erlang.binary_to_term(:erlang.term_to_binary(term))

  test "json_map keeps the order; values are encoded with the call's options" do
    assert RustyJson.encode!(json_map(z: "</>", a: %Derived{age: 1}), escape: :html_safe) ==
             ~s({"z":"\\u003C\\/>","a":) <>
               derived(Derived, %{age: "1", email: "null", name: "null"}) <> "}"

    assert RustyJson.encode!(%{"x" => json_map([])}) == ~s({"x":{}})

    assert RustyJson.encode!([json_map(a: [1])], pretty: true) ==
             "[\n  {\n    \"a\": [\n      1\n    ]\n  }\n]"
  end

  test "json_map evaluates its values once, where it is called (as Jason)" do
    fragment = json_map(n: System.unique_integer([:positive]), m: send(self(), :evaluated))
    assert_received :evaluated
    first = RustyJson.encode!(fragment)
    assert first =~ ~r/^{"n":\d+,"m":"evaluated"}$/
    assert RustyJson.encode!(fragment) == first
    assert RustyJson.encode!([fragment, fragment]) == "[" <> first <> "," <> first <> "]"
    refute_received :evaluated

    # An exception in a value is raised where the helper is called, not at encode time.
    assert_raise ArithmeticError, fn -> json_map(a: 1, b: 1 / opaque(0)) end

    # Values are evaluated left to right.
    json_map(a: send(self(), 1), b: send(self(), 2))
    assert_received 1
    assert_received 2
    assert Process.info(self(), :messages) == {:messages, []}
  end

  test "json_map_take" do
    map = opaque(%{a: 1, b: "x", c: nil})
    assert RustyJson.encode!(json_map_take(map, [:c, :a])) == ~s({"c":null,"a":1})

    # The map as inspect/1 shows it on this VM (its keys in Map.to_list/1 order).
    assert_raise ArgumentError,
                 "expected a map with keys: [:a, :z], got: " <> inspect(map),
                 fn ->
                   json_map_take(map, [:a, :z])
                 end
  end

  test "literal keys are checked at compile time" do
    assert_raise EncodeError, ~s(invalid byte 0x2F in literal key: "my/key"), fn ->
      Code.eval_string(~S|import RustyJson.Helpers; json_map([{:"my/key", 1}])|)
    end
  end

  test "sigils" do
    assert ~J'{"a": [1, 2.5, "s"]}' == %{"a" => [1, 2.5, "s"]}
    n = 3
    assert ~j'[1, #{n}]' == [1, 3]

    assert RustyJson.Sigil.mods_to_opts(~c"aArc") == [
             keys: :atoms,
             keys: :atoms!,
             strings: :reference,
             strings: :copy
           ]

    assert_raise ArgumentError, ~s(unknown sigil modifier "z"), fn ->
      RustyJson.Sigil.mods_to_opts(~c"z")
    end
  end

  test "Encode helpers for hand-written implementations" do
    assert IO.iodata_to_binary(Encode.map(%{a: 1}, [])) == ~s({"a":1})
    assert IO.iodata_to_binary(Encode.keyword([b: 1, a: 2], [])) == ~s({"b":1,"a":2})
    assert IO.iodata_to_binary(Encode.list([1, nil], [])) == "[1,null]"
    assert IO.iodata_to_binary(Encode.string("é<", escape: :unicode_safe)) == ~s("\\u00E9<")
    assert IO.iodata_to_binary(Encode.atom(:x, [])) == ~s("x")
    assert IO.iodata_to_binary(Encode.integer(12)) == "12"
    assert IO.iodata_to_binary(Encode.float(1.0e3)) == "1.0e3"
    assert IO.iodata_to_binary(Encode.struct(~D[2026-01-02], [])) == ~s("2026-01-02")

    assert IO.iodata_to_binary(Encode.struct(%Money{amount: 1, currency: "x"}, [])) ==
             ~s({"amount":1,"currency":"x"})

    assert IO.iodata_to_binary(Encode.value(%{"d" => %Derived{}}, [])) ==
             ~s({"d":) <> derived(Derived, %{age: "null", email: "null", name: "null"}) <> "}"
  end
end
