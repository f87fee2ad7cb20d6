defmodule RustyJson.SchedulingHoldsTest do
  # Work whose size the input controls never holds a normal scheduler 20 ms in one go, whatever the input's
  # shape: output bytes written (the Formatter, pretty layouts), string bytes unescaped, iodata pieces flattened,
  # digits converted. Each case below took 30 ms to seconds in one piece before it was sliced or moved to a dirty
  # scheduler; each also checks the result. Inputs are built before the monitored call (building them is work
  # too). Not async: the system monitor is node-wide.
  use ExUnit.Case, async: false

  import Bitwise
  import RustyJson.Test.LongSchedule, only: [without_long_schedules: 2]

  alias RustyJson.Formatter

  @hold_ms 20

  describe "the Formatter writes by its output's size" do
    test "deep nesting: a 20 KB input laid out to 200 MB" do
      input = String.duplicate("[", 10_000) <> String.duplicate("]", 10_000)
      out = without_long_schedules(@hold_ms, fn -> Formatter.pretty_print(input) end)
      # Two lines per level but the innermost (`[]` stays together), each indented to its depth.
      assert length(:binary.matches(out, "\n")) == 2 * (10_000 - 1)
      assert byte_size(out) > 10_000 * 10_000
      assert binary_part(out, 0, 8) == "[\n  [\n  "
      assert binary_part(out, byte_size(out) - 6, 6) == "\n  ]\n]"
    end

    test "the same as iodata, with a long indent, and minimized" do
      input = ["[", String.duplicate("[", 3_000), String.duplicate("]", 3_000), "]"]
      indent = String.duplicate("\t", 10)

      out =
        without_long_schedules(@hold_ms, fn ->
          IO.iodata_to_binary(Formatter.pretty_print_to_iodata(input, indent: indent))
        end)

      assert out == Formatter.pretty_print(IO.iodata_to_binary(input), indent: indent)
      assert :binary.matches(out, "\n") |> length() == 2 * 3_000
      assert Formatter.minimize(out) == IO.iodata_to_binary(input)
    end

    test "a fragment nested deep in pretty output" do
      fragment =
        RustyJson.Fragment.new(String.duplicate("[", 4_000) <> String.duplicate("]", 4_000))

      out =
        without_long_schedules(@hold_ms, fn ->
          RustyJson.encode!(%{"a" => [fragment]}, pretty: true)
        end)

      assert out ==
               Formatter.pretty_print(
                 "{\"a\":[" <>
                   String.duplicate("[", 4_000) <> String.duplicate("]", 4_000) <> "]}"
               )
    end
  end

  describe "long strings are unescaped off the normal scheduler" do
    setup do
      escaped = String.duplicate("ab\\ncd\\u00e9", 4_166_666)
      %{escaped: escaped, unescaped: String.duplicate("ab\ncdé", 4_166_666)}
    end

    test "a 50 MB string value", %{escaped: escaped, unescaped: unescaped} do
      input = "\"" <> escaped <> "\""

      assert without_long_schedules(@hold_ms, fn -> RustyJson.decode(input) end) ==
               {:ok, unescaped}
    end

    test "in an array, as an object key, and under keys: :atoms!", %{escaped: escaped} = ctx do
      array = "[1, \"" <> escaped <> "\", 2]"
      object = "{\"a\": 1, \"" <> escaped <> "\": [true]}"

      {decoded_array, decoded_object, atoms_error} =
        without_long_schedules(@hold_ms, fn ->
          {RustyJson.decode!(array), RustyJson.decode!(object), atoms!(object)}
        end)

      assert decoded_array == [1, ctx.unescaped, 2]
      assert decoded_object == %{"a" => 1, ctx.unescaped => [true]}
      assert %ArgumentError{} = atoms_error
    end

    test "a string spanning chunks of a stream", %{escaped: escaped} do
      cut = 12 * 3_000_000
      document = "\"" <> binary_part(escaped, 0, cut) <> "\"\n[1]\n"
      chunks = for <<chunk::binary-size(65_536) <- document>>, do: chunk
      rest = binary_part(document, length(chunks) * 65_536, rem(byte_size(document), 65_536))

      items =
        without_long_schedules(@hold_ms, fn ->
          (chunks ++ [rest]) |> RustyJson.Stream.decode_documents() |> Enum.to_list()
        end)

      assert [string, [1]] = items
      assert byte_size(string) == 7 * 3_000_000
    end
  end

  describe "Stream.decode_array(at:) carries a long envelope token" do
    test "a 40 MB string around the array, in 64 KiB chunks, whole and cut short" do
      # The token carried from chunk to chunk was copied whole at every chunk (40 MB: 2.3 s, holds of 160 ms),
      # and validated in one call once it ended.
      document = ~s({"meta":") <> String.duplicate("a", 40_000_000) <> ~s(","data":[1,2]})
      chunks = for <<chunk::binary-size(65_536) <- document>>, do: chunk
      rest = binary_part(document, length(chunks) * 65_536, rem(byte_size(document), 65_536))
      cut = Enum.take(chunks, 600)

      {items, error} =
        without_long_schedules(@hold_ms, fn ->
          items =
            (chunks ++ [rest]) |> RustyJson.Stream.decode_array(at: "/data") |> Enum.to_list()

          error =
            try do
              cut |> RustyJson.Stream.decode_array(at: "/data") |> Enum.to_list()
            rescue
              e in RustyJson.DecodeError -> e
            end

          {items, error}
        end)

      assert items == [1, 2]
      assert %RustyJson.DecodeError{position: position} = error
      assert position == 600 * 65_536
    end
  end

  describe "single pieces of unbounded work" do
    # The issue's sizes (20 MB, 400,000 digits) beside the ones that once held. Inputs are built before the
    # monitored call: building them holds a scheduler by itself (String.duplicate/2 of 20 MB is :binary.copy/2,
    # which does not yield on OTP 27: 110-200 ms; Integer.pow(10, 400_000) is bignum products that do not yield:
    # 0.4-0.6 s on OTP 25, 20-50 ms on OTP 27).
    for mb <- [20, 50] do
      test "a #{mb} MB pretty indent" do
        indent = String.duplicate(" ", unquote(mb) * 1_000_000)

        out =
          without_long_schedules(@hold_ms, fn ->
            RustyJson.encode!([[1]], pretty: [indent: indent])
          end)

        assert out == "[\n" <> indent <> "[\n" <> indent <> indent <> "1\n" <> indent <> "]\n]"
      end
    end

    test "a fragment of a 5M-piece iolist" do
      pieces = List.duplicate("1", 5_000_000)
      fragment = RustyJson.Fragment.new(pieces)

      out = without_long_schedules(@hold_ms, fn -> RustyJson.encode!(%{a: fragment}) end)
      assert byte_size(out) == 5_000_000 + 6
      assert binary_part(out, 0, 8) == ~s({"a":111)
    end

    # About 400,000 and a million digits, made without the quadratic arithmetic of Integer.pow/2.
    for {bytes, digits} <- [{166_000, "400,000"}, {415_000, "1M"}] do
      test "a bignum key of #{digits} digits under sort_keys and maps: :strict" do
        big = :binary.decode_unsigned(:binary.copy(<<0x5A>>, unquote(bytes)))
        map = %{big => 1, 2 => 3}

        {sorted, strict} =
          without_long_schedules(@hold_ms, fn ->
            {RustyJson.encode!(map, sort_keys: true), RustyJson.encode!(map, maps: :strict)}
          end)

        # The value path's digits (Integer.to_string/1 is quadratic here, minutes on OTP 25).
        digits = RustyJson.encode!(big)
        pairs = Enum.sort([{digits, 1}, {"2", 3}])
        assert sorted == "{" <> Enum.map_join(pairs, ",", fn {k, v} -> ~s("#{k}":#{v}) end) <> "}"
        assert byte_size(strict) == byte_size(sorted)
      end
    end

    test "a float of 300,000 digits as a decimal" do
      # floats: :decimals, given to the NIF directly (bit 5 of its options; the Decimal library is not a
      # dependency): the coefficient's digits convert in quadratic time.
      json = "[0." <> String.duplicate("7", 300_000) <> "]"
      decoded = without_long_schedules(@hold_ms, fn -> RustyJson.Native.decode(json, 1 <<< 5) end)
      assert [%{__struct__: Decimal, sign: 1, exp: -300_000, coef: coef}] = decoded
      assert rem(coef, 1000) == 777 and coef > Integer.pow(10, 299_998)
    end

    # Half a million digits: one piece of work of ~0.2 s here (the conversion is quadratic: a million digits
    # proved nothing more and took four times as long).
    test "a 500,000-digit integer with a raised digit limit" do
      digits = String.duplicate("7", 500_000)

      decoded =
        without_long_schedules(@hold_ms, fn ->
          RustyJson.decode!("[1, " <> digits <> "]", decoding_integer_digit_limit: 500_000)
        end)

      assert [1, n] = decoded
      assert rem(n, 1000) == 777 and n > Integer.pow(10, 499_998)
    end
  end

  describe "RustyJson.get/3 walks a large document in slices" do
    test "an 80 MB document (about 80 ms of walking), and a 50 MB string on the way" do
      json =
        ~s({"data": [) <> String.duplicate("12,", 27_000_000) <> ~s(7], "meta": {"total": 3}})

      assert without_long_schedules(@hold_ms, fn ->
               RustyJson.get(json, ["/meta/total", "/data/27000000"])
             end) == {:ok, [3, 7]}

      long = ~s({"s": ") <> String.duplicate("ab\\ncd\\u00e9", 4_166_666) <> ~s(", "n": 1})
      assert without_long_schedules(@hold_ms, fn -> RustyJson.get(long, "/n") end) == {:ok, 1}
    end

    test "a 10 MB array walked again from its start after the skim's late doubt, valid or not" do
      # 64 levels more than the skim tracks, at the array's end: the walk goes back to the array's `[` (40-45 ms in
      # one slice before the slice's budget moved back with it).
      head = ~s({"a":1,"b":[) <> String.duplicate(~s([1,{"x":[]}],), 800_000)
      deep = String.duplicate("[", 64) <> String.duplicate("]", 64)
      valid = head <> deep <> "]}"
      invalid = head <> deep <> "]x}"

      {found, error} =
        without_long_schedules(@hold_ms, fn ->
          {RustyJson.get(valid, "/a"), RustyJson.get(invalid, "/a")}
        end)

      assert found == {:ok, 1}
      assert {:error, %RustyJson.DecodeError{position: position}} = error
      assert position == byte_size(invalid) - 2
    end
  end

  describe "a million-deep document on a VM's first call" do
    # The first call of a VM touches memory no call touched before (on a virtual machine a page first touched
    # costs up to ~8 µs): the parser's and the locator's frame stacks, grown by doubling, held a slice 37-82 ms
    # there (12 MB copied into 24 MB of new pages in one push), later calls under 10 ms. Each case runs in a child
    # VM of its own (no compiling: this build's modules); a hold there is rerun in another, as
    # `without_long_schedules/3` reruns in one VM (whose later calls would no longer be first ones).
    @first_call_cases [
      decode: {"RustyJson.decode!(doc)", 1_000_000},
      get: {~s{RustyJson.get(doc, "/0") |> elem(1)}, 999_999},
      stream:
        {"[doc] |> RustyJson.Stream.decode_documents() |> Enum.to_list() |> hd()", 1_000_000}
    ]

    for {name, {call, depth}} <- @first_call_cases do
      test "#{name}" do
        assert first_call(unquote(call), 4) == "depth #{unquote(depth)}"
      end
    end
  end

  # Runs `call` on a million-deep `doc` as a child VM's first call under the monitor: the nesting depth of its
  # result, or the holds of every one of `attempts` child VMs. The depth is taken in the monitored process: the
  # result itself sent back from it is a copy of 16 MB that the VM makes in one go (22-25 ms on a VM whose fresh
  # pages are dear), a hold of the harness's, not the library's.
  defp first_call(call, attempts, holds \\ []) do
    code = """
    n = 1_000_000
    doc = String.duplicate("[", n) <> String.duplicate("]", n)
    depth = fn f, [inner], d -> f.(f, inner, d + 1); _f, [], d -> d + 1 end

    try do
      found =
        RustyJson.Test.LongSchedule.without_long_schedules(
          #{@hold_ms},
          fn -> depth.(depth, #{call}, 0) end,
          1
        )

      IO.puts("depth \#{found}")
    rescue
      e in ExUnit.AssertionError -> IO.puts("held " <> e.message)
    end
    """

    case RustyJson.ChildVM.run(code, 50) do
      {"held " <> _ = held, 0} when attempts > 1 -> first_call(call, attempts - 1, [held | holds])
      {"held " <> _ = held, 0} -> Enum.reverse([held | holds]) |> Enum.join()
      {output, 0} -> String.trim(output)
      {output, status} -> "exit #{status}: #{output}"
    end
  end

  # `keys: :atoms!` raises from `decode/2` too, as Jason does for a key that is not an existing atom.
  defp atoms!(json) do
    RustyJson.decode(json, keys: :atoms!)
  rescue
    e in ArgumentError -> e
  end
end
