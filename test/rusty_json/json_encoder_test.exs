defmodule RustyJson.JSONEncoderTest do
  # A struct with no RustyJson.Encoder (and no Jason.Encoder) implementation but an Elixir `JSON.Encoder` one
  # (Elixir 1.18+) is encoded through it; on older Elixir nothing changes.
  use ExUnit.Case, async: true

  if Code.ensure_loaded?(JSON.Encoder) do
    # Elixir's own JSON writes the reference text (same escapes as RustyJson's default `escape: :json`).
    defp reference(term), do: apply(JSON, :encode!, [term])

    test "derived and hand-written JSON.Encoder implementations, alone and nested" do
      derived = %RustyJson.Test.JSONDerived{
        name: "Ada",
        tags: ["x", 1.5],
        nested: %{"k" => [nil]},
        secret: "pw"
      }

      custom = %RustyJson.Test.JSONCustom{amount: 7}

      for term <- [
            derived,
            custom,
            [derived, custom, %{"d" => derived}],
            %RustyJson.Test.JSONDerived{name: custom, tags: [derived], nested: nil}
          ] do
        json = RustyJson.encode!(term)
        assert json == reference(term)
        refute json =~ "pw"
        assert RustyJson.decode!(json) == RustyJson.decode!(reference(term))
      end
    end

    test "nested values are written with the call's options" do
      custom = %RustyJson.Test.JSONCustom{amount: 2}

      assert RustyJson.encode!(custom, escape: :html_safe) ==
               ~S({"cents":200,"note":"\u003C\/é"})

      assert RustyJson.encode!(custom, escape: :unicode_safe) ==
               ~S({"cents":200,"note":"</\u00E9"})

      assert RustyJson.encode!([custom], pretty: true) ==
               ~s([\n  {\n    "cents": 200,\n    "note": "</é"\n  }\n])

      assert {:ok, _} = RustyJson.encode(%{a: custom}, maps: :strict)
    end

    test "strings a JSON.Encoder implementation writes itself are escaped in the call's mode" do
      # Elixir's JSON.Encoder for a string ignores the encoder it is given: such strings come back escaped as
      # `:json`, and are written again.
      text = "é\u2028\u2029</script><!--\u{1F600}"
      self_written = %RustyJson.Test.JSONSelfWritten{text: text}
      alpha = RustyJson.OrderedObject.new([{"y", text}, {"x", %{text => [1]}}])
      as_written = RustyJson.OrderedObject.new([{"zed", text}, {"alpha", alpha}])

      for escape <- [:javascript_safe, :html_safe, :unicode_safe], pretty <- [false, true] do
        assert RustyJson.encode!([self_written], escape: escape, pretty: pretty) ==
                 RustyJson.encode!([as_written], escape: escape, pretty: pretty)
      end

      html = RustyJson.encode!(%{"k" => [self_written]}, escape: :html_safe)
      refute html =~ "</"
      refute html =~ "<!--"
      refute html =~ "\u2028"

      assert RustyJson.decode!(html) ==
               RustyJson.decode!(RustyJson.encode!(%{"k" => [as_written]}))

      assert RustyJson.encode!(self_written, escape: :unicode_safe) =~ ~r/\A[\x20-\x7E]*\z/
    end

    test "sort_keys sorts the objects a JSON.Encoder implementation writes, at every level" do
      inner = %RustyJson.Test.JSONUnsorted{b: 2, a: 3}
      unsorted = %RustyJson.Test.JSONUnsorted{b: 1, a: %{"d" => 1, "c" => [inner]}}
      assert RustyJson.encode!(unsorted) == ~s({"b":1,"a":{"c":[{"b":2,"a":3}],"d":1}})

      assert RustyJson.encode!(unsorted, sort_keys: true) ==
               ~s({"a":{"c":[{"a":3,"b":2}],"d":1},"b":1})

      text = "é</"
      self_written = %RustyJson.Test.JSONSelfWritten{text: text}
      plain = %{"zed" => text, "alpha" => %{"y" => text, "x" => %{text => [1]}}}

      for escape <- [:json, :html_safe, :unicode_safe] do
        assert RustyJson.encode!([self_written], sort_keys: true, escape: escape) ==
                 RustyJson.encode!([plain], sort_keys: true, escape: escape)
      end

      # The implementation's output is text, which does not tell an ordered object from a map: sorted too.
      ordered = %RustyJson.Test.JSONUnsorted{b: RustyJson.OrderedObject.new(z: 1, y: 2), a: nil}
      assert RustyJson.encode!(ordered) == ~s({"b":{"z":1,"y":2},"a":null})
      assert RustyJson.encode!(ordered, sort_keys: true) == ~s({"a":null,"b":{"y":2,"z":1}})
    end

    test "maps: :strict refuses a key a JSON.Encoder implementation writes twice" do
      # Elixir's JSON.Encoder for maps writes `:a` and `"a"` as the same key.
      twice = %RustyJson.Test.JSONMap{map: %{:a => 1, "a" => 2}}
      assert RustyJson.encode!(twice) =~ ~r/\A\{"a":[12],"a":[12]\}\z/

      for opts <- [[maps: :strict], [maps: :strict, sort_keys: true, escape: :html_safe]] do
        assert {:error, %RustyJson.EncodeError{message: "duplicate key: a"}} =
                 RustyJson.encode([twice], opts)
      end

      escaped = %RustyJson.Test.JSONText{text: ~S({"a":1,"\u0061":2})}

      assert {:error, %RustyJson.EncodeError{message: "duplicate key: a"}} =
               RustyJson.encode(escaped, maps: :strict)

      # Distinct keys pass, in the order Elixir's encoder wrote them (the VM's map order for atom keys).
      strict = RustyJson.encode!(%RustyJson.Test.JSONMap{map: %{a: 1, b: 2}}, maps: :strict)
      assert strict == RustyJson.encode!(%RustyJson.Test.JSONMap{map: %{a: 1, b: 2}})
      assert strict in [~s({"a":1,"b":2}), ~s({"b":2,"a":1})]
    end

    test "invalid JSON from a JSON.Encoder implementation is an EncodeError naming it" do
      bad = %RustyJson.Test.JSONText{text: ~s({"a":1,})}

      for opts <- [[escape: :html_safe], [sort_keys: true], [maps: :strict]] do
        assert {:error, %RustyJson.EncodeError{message: message}} =
                 RustyJson.encode(%{"x" => [bad]}, opts)

        assert message ==
                 "the JSON.Encoder implementation of RustyJson.Test.JSONText returned invalid JSON: " <>
                   ~s[unexpected byte at position 7: 0x7D ("}")]
      end

      # With none of those options the text is written as it is: nothing is spent on it.
      assert RustyJson.encode!(%RustyJson.Test.JSONText{text: ~s({ "a" : 1 })}) == ~s({ "a" : 1 })
    end

    test "RustyJson's own implementation comes first" do
      both = %RustyJson.Test.BothEncoders{a: 1, b: 2}
      assert RustyJson.encode!(both) == ~s({"a":1})
      assert reference(both) == ~s({"b":2})
    end

    test "errors inside a JSON.Encoder implementation are RustyJson's" do
      bad = %RustyJson.Test.JSONDerived{name: <<0xFF>>, tags: [], nested: nil}

      assert {:error, %RustyJson.EncodeError{message: "invalid byte 0xFF in <<255>>"}} =
               RustyJson.encode(bad)
    end

    if Code.ensure_loaded?(Duration) do
      test "structs of Elixir itself that only JSON.Encoder knows (Duration)" do
        duration = Duration.new!(hour: 1, minute: 30)
        assert RustyJson.encode!(%{"d" => duration}) == reference(%{"d" => duration})
      end
    end
  else
    test "without JSON.Encoder (Elixir < 1.18) a struct without an implementation still raises" do
      refute Code.ensure_loaded?(JSON.Encoder)

      assert {:error, %Protocol.UndefinedError{protocol: RustyJson.Encoder}} =
               RustyJson.encode(%RustyJson.Test.NoImpl{a: 1})
    end
  end
end
