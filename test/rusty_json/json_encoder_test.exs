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
