defmodule RustyJson.EncoderPlainResultsTest do
  # RustyJson 0.3.10's two calls its users make: an encoder implementation that returns a plain term (a map, a
  # list, a number) rather than iodata is encoded again, and `RustyJson.Encode.opts/0,1`.
  use ExUnit.Case, async: true

  alias RustyJson.Test.{BadIodata, Returns}
  alias RustyJson.Test.PlainMoney, as: Money

  # The JSON of the map `Money`'s implementation returns, its keys in the running VM's `Map.to_list/1` order
  # (Jason's; from OTP 26 atom keys are ordered by atom index).
  defp money(amount, currency) do
    %{amount: amount, currency: currency}
    |> Map.to_list()
    |> Enum.map_join(",", fn
      {:amount, a} -> ~s("amount":#{a})
      {:currency, c} -> ~s("currency":"#{c}")
    end)
    |> then(&"{#{&1}}")
  end

  describe "an implementation returning a plain term" do
    test "a map is encoded as 0.3.10 documents" do
      assert RustyJson.encode!(%Money{amount: 42, currency: :USD}) == money(42, "USD")
      assert RustyJson.encode!([%Money{amount: 1, currency: :EUR}]) == "[#{money(1, "EUR")}]"

      assert RustyJson.encode!(%{m: %Money{amount: 1, currency: :EUR}}, pretty: true) ==
               RustyJson.Formatter.pretty_print(~s({"m":#{money(1, "EUR")}}))
    end

    test "the call's options hold in what is encoded again" do
      assert RustyJson.encode!(%Returns{value: %{"<" => "</x>"}}, escape: :html_safe) ==
               ~S({"\u003C":"\u003C\/x>"})

      assert RustyJson.encode!(%Returns{value: %{b: 1, a: 2}}, sort_keys: true) ==
               ~s({"a":2,"b":1})
    end

    test "lists that are not iodata, numbers, atoms, nested structs" do
      for {value, json} <- [
            {[1000], "[1000]"},
            {[-1], "[-1]"},
            {["a", %{b: 1}], ~s(["a",{"b":1}])},
            {42, "42"},
            {1.5, "1.5"},
            {nil, "null"},
            {true, "true"},
            {%{x: [%Money{amount: 1, currency: :E}]}, ~s({"x":[#{money(1, "E")}]})}
          ] do
        assert RustyJson.encode!(%{a: %Returns{value: value}}) == ~s({"a":#{json}}),
               inspect(value)

        assert RustyJson.encode!(%Returns{value: value}) == json, inspect(value)
      end

      assert RustyJson.encode!(%{a: %BadIodata{value: -1}}) == ~s({"a":[-1]})
    end

    test "iodata is written as it is" do
      assert RustyJson.encode!(%{a: %Returns{value: ["[1", ?,, "2]"]}}) == ~s({"a":[1,2]})
      assert RustyJson.encode!(%Returns{value: "raw"}) == "raw"
      # Bytes too (hand-written JSON is not checked, as in Jason).
      assert RustyJson.encode!([%Returns{value: <<255>>}]) == <<"[", 255, "]">>
    end

    test "in a map the NIF cannot write (a key Elixir converts)" do
      assert RustyJson.encode!(%{URI.parse("x") => %Returns{value: [1000]}}) == ~s({"x":[1000]})
    end

    test "what cannot be encoded is an error naming the implementation" do
      for value <- [{1, 2}, self(), %Returns{value: 1}, %{a: <<255>>}] do
        error =
          assert_raise ArgumentError, fn -> RustyJson.encode(%{a: %Returns{value: value}}) end

        assert error.message =~ "the RustyJson.Encoder implementation for RustyJson.Test.Returns"
        assert error.message =~ inspect(value)
      end
    end
  end

  describe "RustyJson.Encode.opts/0,1" do
    test "an escape mode, as 0.3.10's opts/1" do
      assert RustyJson.Encode.string("a<b", RustyJson.Encode.opts(:html_safe))
             |> IO.iodata_to_binary() == ~S("a\u003Cb")

      assert RustyJson.Encode.string("\u2028", RustyJson.Encode.opts(:javascript_safe))
             |> IO.iodata_to_binary() == ~S("\u2028")

      assert RustyJson.Encode.string("é", RustyJson.Encode.opts(:unicode_safe))
             |> IO.iodata_to_binary() == ~S("\u00E9")

      assert RustyJson.Encode.string("a<b", RustyJson.Encode.opts(:json)) |> IO.iodata_to_binary() ==
               ~s("a<b")
    end

    test "the defaults, accepted by every function of RustyJson.Encode" do
      opts = RustyJson.Encode.opts()
      assert opts == RustyJson.Encode.opts(:json)
      assert IO.iodata_to_binary(RustyJson.Encode.value(%{a: [1]}, opts)) == ~s({"a":[1]})
      assert IO.iodata_to_binary(RustyJson.Encode.atom(:x, opts)) == ~s("x")
      assert IO.iodata_to_binary(RustyJson.Encode.list([1, "a"], opts)) == ~s([1,"a"])
      assert IO.iodata_to_binary(RustyJson.Encode.map(%{a: 1}, opts)) == ~s({"a":1})

      assert IO.iodata_to_binary(RustyJson.Encode.keyword([b: 1, a: 2], opts)) ==
               ~s({"b":1,"a":2})

      assert IO.iodata_to_binary(RustyJson.Encode.ordered([{"b", 1}], opts)) == ~s({"b":1})

      assert IO.iodata_to_binary(RustyJson.Encode.struct(~D[2024-01-02], opts)) ==
               ~s("2024-01-02")

      # What RustyJson.encode/2 takes too.
      assert RustyJson.encode!("<", RustyJson.Encode.opts(:html_safe)) == ~S("\u003C")
    end

    test "a bad escape mode is an ArgumentError naming it" do
      assert_raise ArgumentError, ~r/escape/, fn -> RustyJson.Encode.opts(:nope) end
    end
  end
end
