defmodule RustyJson.DecodeLimitsTest do
  # The limits for untrusted input: `max_depth`, `decoding_integer_digit_limit` and `duplicate_keys`, at, below
  # and above their values, on small inputs (decoded on the caller's heap) and inputs of 64 KiB or more (decoded
  # detached, in slices), with exact error positions.
  use ExUnit.Case, async: true

  alias RustyJson.DecodeError

  # Whitespace that pushes a document past the detached threshold (64 KiB) without changing its value.
  @pad String.duplicate(" ", 70_000)

  defp sizes(json), do: [{json, 0}, {@pad <> json, byte_size(@pad)}]

  defp error(json, opts) do
    assert {:error, %DecodeError{} = e} = RustyJson.decode(json, opts)
    assert_raise DecodeError, fn -> RustyJson.decode!(json, opts) end
    {e.position, e.token, Exception.message(e)}
  end

  describe "max_depth" do
    # `d` nested levels alternating arrays and objects, and where each level's bracket is.
    defp nested(d) do
      {open, close, starts} =
        Enum.reduce(0..(d - 1)//1, {"", "", []}, fn level, {open, close, starts} ->
          if rem(level, 2) == 0,
            do: {open <> "[1, ", "]" <> close, [byte_size(open) | starts]},
            else: {open <> ~s({"k": ), "}" <> close, [byte_size(open) | starts]}
        end)

      {open <> "0" <> close, Enum.reverse(starts)}
    end

    test "at, below and above the limit; the error is the bracket that goes past it" do
      for max <- [0, 1, 2, 5], d <- 0..7, {json, shift} <- sizes(elem(nested(d), 0)) do
        {_, starts} = nested(d)

        if d <= max do
          assert {:ok, _} = RustyJson.decode(json, max_depth: max)
        else
          at = shift + Enum.at(starts, max)
          bracket = :binary.at(json, at)

          assert error(json, max_depth: max) ==
                   {at, nil,
                    "unexpected byte at position #{at}: 0x#{Integer.to_string(bracket, 16)} " <>
                      "(#{inspect(<<bracket>>)})"}
        end
      end
    end

    test "[] has depth 1, a scalar 0; no limit by default or with :infinity" do
      assert RustyJson.decode("[]", max_depth: 1) == {:ok, []}
      assert RustyJson.decode("{}", max_depth: 1) == {:ok, %{}}
      assert RustyJson.decode("7", max_depth: 0) == {:ok, 7}
      assert {:error, %DecodeError{position: 0}} = RustyJson.decode("[]", max_depth: 0)
      deep = String.duplicate("[", 100_000) <> String.duplicate("]", 100_000)
      assert {:ok, _} = RustyJson.decode(deep)
      assert {:ok, _} = RustyJson.decode(deep, max_depth: :infinity)
      assert {:ok, _} = RustyJson.decode(deep, max_depth: 100_000)
      assert {:error, %DecodeError{position: 99_999}} = RustyJson.decode(deep, max_depth: 99_999)
    end
  end

  describe "decoding_integer_digit_limit" do
    test "counts the integer token's bytes, minus sign included; floats and zero are not limited" do
      for limit <- [2, 10, 19, 20, 1024, 1500] do
        at = String.duplicate("9", limit)
        neg_at = "-" <> String.duplicate("9", limit - 1)
        over = at <> "1"
        neg_over = "-" <> at

        for {json, shift} <- sizes("[0, -0, 1.5e3, " <> at <> ", " <> neg_at <> "]") do
          assert {:ok, [0, 0, 1.5e3, a, b]} =
                   RustyJson.decode(json, decoding_integer_digit_limit: limit)

          assert a == String.to_integer(at) and b == String.to_integer(neg_at)
          _ = shift
        end

        for token <- [over, neg_over], {json, shift} <- sizes("[1, " <> token <> "]") do
          assert error(json, decoding_integer_digit_limit: limit) ==
                   {shift + 4, token,
                    "unexpected sequence at position #{shift + 4}: #{inspect(token)}"}
        end
      end
    end

    test "the default is Jason's 1024 bytes" do
      assert {:ok, _} = RustyJson.decode(String.duplicate("9", 1024))
      assert {:ok, _} = RustyJson.decode("-" <> String.duplicate("9", 1023))
      token = String.duplicate("9", 1025)
      assert {:error, %DecodeError{position: 0, token: ^token}} = RustyJson.decode(token)
      assert {:error, %DecodeError{position: 0}} = RustyJson.decode(token, keys: :atoms)
      assert {:ok, _} = RustyJson.decode(token, decoding_integer_digit_limit: 1025)
    end

    # A child VM's start and two modules' compile: ~2 s alone, but it shares the CPU with the rest of the suite.
    @tag timeout: 300_000
    test "config :rusty_json, decoding_integer_digit_limit: n sets the default (compiled in, as Jason's)" do
      # A child VM compiles the option parsing and the API again with the config set, as Mix does when an app's
      # config changes a dependency's compile-time environment.
      code = """
      Application.put_env(:rusty_json, :decoding_integer_digit_limit, 5)
      Code.compiler_options(ignore_module_conflict: true, docs: false)
      Code.compile_file("lib/rusty_json/decode_options.ex")
      Code.compile_file("lib/rusty_json.ex")
      results = [
        RustyJson.decode("12345"),
        RustyJson.decode("[123456]"),
        RustyJson.decode(["[", "123456]"], keys: :atoms),
        RustyJson.decode!("123456", decoding_integer_digit_limit: 6),
        RustyJson.decode!("-1234", decoding_integer_digit_limit: 6)
      ]
      IO.write("RESULT " <> inspect(results))
      """

      {output, status} = RustyJson.ChildVM.run(code, 240)
      assert status == 0, output
      [_, result] = String.split(output, "RESULT ", parts: 2)

      assert result ==
               inspect([
                 {:ok, 12345},
                 {:error, %DecodeError{position: 1, token: "123456", data: "[123456]"}},
                 {:error, %DecodeError{position: 1, token: "123456", data: "[123456]"}},
                 123_456,
                 -1234
               ])
    end
  end

  describe "duplicate_keys" do
    # Objects of `n` keys where the key at `repeat` (if any) repeats key 0, under every key mode.
    defp object(n, repeat) do
      pairs =
        for i <- 0..(n - 1),
            do: if(i == repeat, do: {"k0", i}, else: {"k#{i}", i})

      json = "{" <> Enum.map_join(pairs, ", ", fn {k, v} -> ~s("#{k}": #{v}) end) <> "}"
      {json, pairs}
    end

    defp key_modes do
      [:strings, :atoms, :copy, :intern, &String.upcase/1]
    end

    defp keyed(key, :atoms), do: String.to_atom(key)
    defp keyed(key, fun) when is_function(fun), do: fun.(key)
    defp keyed(key, _mode), do: key

    test ":first, :last and :error for small and large objects, small and large inputs, every key mode" do
      for n <- [2, 5, 32, 33, 40, 3000], keys <- key_modes() do
        repeat = n - 1
        {json, pairs} = object(n, repeat)

        for {input, shift} <- sizes("[" <> json <> "]") do
          first = pairs |> Enum.reverse() |> Map.new(fn {k, v} -> {keyed(k, keys), v} end)

          last = Map.new(pairs, fn {k, v} -> {keyed(k, keys), v} end)
          assert RustyJson.decode(input, keys: keys) == {:ok, [first]}
          assert RustyJson.decode(input, keys: keys, duplicate_keys: :first) == {:ok, [first]}
          assert RustyJson.decode(input, keys: keys, duplicate_keys: :last) == {:ok, [last]}
          assert map_size(last) == n - 1 and last[keyed("k0", keys)] == repeat

          # The repeated key's opening quote, inside the array.
          at = shift + 1 + (:binary.matches(json, ~s("k0")) |> List.last() |> elem(0))

          assert error(input, keys: keys, duplicate_keys: :error) ==
                   {at, ~s("k0"), "unexpected sequence at position #{at}: #{inspect(~s("k0"))}"}
        end
      end
    end

    test ":error passes objects without repeats, and compares keys as decoded" do
      json = ~s({"a": {"b": 1, "c": [{"b": 2}]}, "b": 3, "a\\u00e9": 4, "aé": 5})
      at = byte_size(~s({"a": {"b": 1, "c": [{"b": 2}]}, "b": 3, "a\\u00e9": 4, ))

      assert error(json, duplicate_keys: :error) ==
               {at, ~s("aé"), "unexpected sequence at position #{at}: \"\\\"aé\\\"\""}

      ok = ~s({"a": {"b": 1, "c": [{"b": 2}]}, "b": 3})
      assert RustyJson.decode(ok, duplicate_keys: :error) == RustyJson.decode(ok)

      # With a key function its results are compared: distinct keys that map to the same one repeat.
      assert {:error, %DecodeError{position: 9, token: ~s("A")}} =
               RustyJson.decode(~s({"a": 1, "A": 2}),
                 keys: &String.downcase/1,
                 duplicate_keys: :error
               )

      assert RustyJson.decode(~s({"a": 1, "A": 2}),
               keys: &String.downcase/1,
               duplicate_keys: :last
             ) ==
               {:ok, %{"a" => 2}}
    end

    test "ordered objects keep every pair for :first and :last, and fail for :error" do
      json = ~s({"a": 1, "b": 2, "a": 3})
      pairs = [{"a", 1}, {"b", 2}, {"a", 3}]

      for mode <- [:first, :last] do
        assert {:ok, %RustyJson.OrderedObject{values: ^pairs}} =
                 RustyJson.decode(json, objects: :ordered_objects, duplicate_keys: mode)
      end

      assert {:error, %DecodeError{position: 17, token: ~s("a")}} =
               RustyJson.decode(json, objects: :ordered_objects, duplicate_keys: :error)
    end

    test "inputs decoded in several slices find a repeat in the last object" do
      objects = for i <- 1..20_000, do: ~s({"id": #{i}, "name": "n#{i}"})
      json = "[" <> Enum.join(objects, ",") <> ~s(,{"id": 0, "id": 1}])
      at = byte_size(json) - byte_size(~s("id": 1}]))

      for keys <- key_modes() do
        assert {:error, %DecodeError{position: ^at, token: ~s("id")}} =
                 RustyJson.decode(json, keys: keys, duplicate_keys: :error)
      end
    end
  end

  describe "option values" do
    test "each limit's bad value is an ArgumentError naming the option and what it allows" do
      for {opt, bad, allowed} <- [
            {:max_depth, -1, "a non-negative integer or :infinity"},
            {:max_depth, "3", "a non-negative integer or :infinity"},
            {:decoding_integer_digit_limit, :infinity, "a non-negative integer"},
            {:decoding_integer_digit_limit, 1.5, "a non-negative integer"},
            {:duplicate_keys, :keep, ":first, :last or :error"}
          ] do
        message =
          "invalid value for the #{inspect(opt)} decode option: #{inspect(bad)} (allowed: #{allowed})"

        assert_raise ArgumentError, message, fn -> RustyJson.decode("1", [{opt, bad}]) end
      end
    end
  end
end
