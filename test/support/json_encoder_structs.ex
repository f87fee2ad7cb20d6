# Structs whose only encoder is Elixir's `JSON.Encoder` (Elixir 1.18+), for the fallback RustyJson.Encoder's `Any`
# implementation gives them. Compiled with the project (protocols are consolidated), and only where the protocol
# exists: on older Elixir this file defines nothing.
if Code.ensure_loaded?(JSON.Encoder) do
  defmodule RustyJson.Test.JSONDerived do
    @moduledoc false
    @derive {JSON.Encoder, only: [:name, :tags, :nested]}
    defstruct [:name, :tags, :nested, :secret]
  end

  defmodule RustyJson.Test.JSONCustom do
    @moduledoc false
    defstruct [:amount]

    defimpl JSON.Encoder do
      # Hands a nested value back to the encoder, as hand-written implementations do.
      def encode(%{amount: amount}, encoder),
        do: [
          "{\"cents\":",
          encoder.(amount * 100, encoder),
          ",\"note\":",
          encoder.("</é", encoder),
          "}"
        ]
    end
  end

  defmodule RustyJson.Test.JSONSelfWritten do
    @moduledoc false
    defstruct [:text]

    defimpl JSON.Encoder do
      # Writes its strings and a map through `JSON.Encoder` itself, whose string implementation ignores the
      # encoder (so the text is escaped as `:json` whatever the call's `escape:`), and an object of its own.
      def encode(%{text: text}, encoder) do
        s = JSON.Encoder.encode(text, encoder)

        [
          ~s({"zed":),
          s,
          ~s(,"alpha":{"y":),
          s,
          ~s(,"x":),
          JSON.Encoder.encode(%{text => [1]}, encoder),
          "}}"
        ]
      end
    end
  end

  defmodule RustyJson.Test.JSONUnsorted do
    @moduledoc false
    @derive JSON.Encoder
    defstruct [:b, :a]
  end

  defmodule RustyJson.Test.JSONMap do
    @moduledoc false
    # A map through Elixir's own implementation: `%{:a => 1, "a" => 2}` writes the key "a" twice.
    defstruct [:map]

    defimpl JSON.Encoder do
      def encode(%{map: map}, encoder), do: JSON.Encoder.encode(map, encoder)
    end
  end

  defmodule RustyJson.Test.JSONText do
    @moduledoc false
    # Returns `text` as its JSON, whatever it is.
    defstruct [:text]

    defimpl JSON.Encoder do
      def encode(%{text: text}, _encoder), do: text
    end
  end

  defmodule RustyJson.Test.BothEncoders do
    @moduledoc false
    @derive {RustyJson.Encoder, only: [:a]}
    @derive {JSON.Encoder, only: [:b]}
    defstruct [:a, :b]
  end
end
