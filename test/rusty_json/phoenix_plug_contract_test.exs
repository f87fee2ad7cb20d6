defmodule RustyJson.PhoenixPlugContractTest do
  # Phoenix and Plug are not installable here (no hex), so these tests call RustyJson exactly as they do:
  # - Plug.Parsers.JSON turns `json_decoder: RustyJson` into `{RustyJson, :decode!, []}`, calls
  #   `apply(mod, fun, [body | args])`, wraps a non-map result as `%{"_json" => result}`, and rescues any
  #   exception into `Plug.Parsers.ParseError` with the original in `:exception` (Plug 1.x).
  # - Phoenix calls `Phoenix.json_library().encode_to_iodata!/1` (controllers, channels), `encode!/1` and
  #   `decode!/1` (channel serializers, LiveView).
  use ExUnit.Case, async: true

  alias RustyJson.Test.{Derived, Money, Outer}

  # What Plug.Parsers.JSON does with its `json_decoder` option.
  defp plug_parse(body, decoder) do
    {mod, fun, args} =
      case decoder do
        {mod, fun, args} -> {mod, fun, args}
        mod when is_atom(mod) -> {mod, :decode!, []}
      end

    try do
      case apply(mod, fun, [body | args]) do
        %{} = params -> {:ok, params}
        other -> {:ok, %{"_json" => other}}
      end
    rescue
      exception -> {:parse_error, exception}
    end
  end

  describe "Plug.Parsers json_decoder: RustyJson" do
    test "a JSON object body becomes the params" do
      assert plug_parse(~s({"user":{"name":"Ada","tags":["a"]}}), RustyJson) ==
               {:ok, %{"user" => %{"name" => "Ada", "tags" => ["a"]}}}
    end

    test "a non-object body is wrapped in _json" do
      assert plug_parse("[1,2]", RustyJson) == {:ok, %{"_json" => [1, 2]}}
    end

    test "a bad body raises RustyJson.DecodeError with a useful message" do
      assert {:parse_error, %RustyJson.DecodeError{position: 9} = error} =
               plug_parse(~s({"name": }), RustyJson)

      assert Exception.message(error) == "unexpected byte at position 9: 0x7D (\"}\")"

      assert {:parse_error, %RustyJson.DecodeError{} = error} = plug_parse(~s({"a":), RustyJson)
      assert Exception.message(error) == "unexpected end of input at position 5"
    end

    test "an MFA with options, as {RustyJson, :decode!, [[keys: :atoms!]]}" do
      assert plug_parse(~s({"name":"Ada"}), {RustyJson, :decode!, [[keys: :atoms!]]}) ==
               {:ok, %{name: "Ada"}}

      assert {:parse_error, %ArgumentError{}} =
               plug_parse(
                 ~s({"no_such_atom_for_plug_test_#{System.unique_integer([:positive])}":1}),
                 {RustyJson, :decode!, [[keys: :atoms!]]}
               )
    end
  end

  describe "config :phoenix, :json_library, RustyJson" do
    setup do
      {:ok, json_library: RustyJson}
    end

    test "encode_to_iodata!/1 with structs inside, as Phoenix.Controller.json/2 sends it", %{
      json_library: lib
    } do
      data = %{
        "user" => %Derived{name: "Ada", age: 36, email: "ada@example.com"},
        "price" => %Money{amount: 10, currency: "EUR"},
        "nested" => [%Outer{}],
        "at" => ~U[2026-11-22 12:00:00Z]
      }

      iodata = lib.encode_to_iodata!(data)
      json = IO.iodata_to_binary(iodata)
      assert json == lib.encode!(data)

      decoded = lib.decode!(json)
      assert decoded["user"] == %{"name" => "Ada", "age" => 36, "email" => "ada@example.com"}
      assert decoded["price"] == %{"amount" => 10, "currency" => "EUR"}
      assert decoded["at"] == "2026-11-22T12:00:00Z"

      for ref <- RustyJson.Reference.names() do
        assert RustyJson.Reference.decode(ref, json) == {:ok, decoded}, "as #{ref}"
      end
    end

    test "channel messages round-trip through encode!/1 and decode!/1", %{json_library: lib} do
      message = [nil, "1", "room:lobby", "new_msg", %{"body" => "héllo \u2028 <b>"}]
      assert message |> lib.encode!() |> lib.decode!() == message
    end

    test "encode_to_iodata!/1 raises on what cannot be encoded", %{json_library: lib} do
      assert_raise Protocol.UndefinedError, fn -> lib.encode_to_iodata!(%{"pid" => self()}) end
      assert_raise RustyJson.EncodeError, fn -> lib.encode_to_iodata!(<<0xFF>>) end
    end
  end
end
