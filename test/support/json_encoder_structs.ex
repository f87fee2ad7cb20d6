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

  defmodule RustyJson.Test.BothEncoders do
    @moduledoc false
    @derive {RustyJson.Encoder, only: [:a]}
    @derive {JSON.Encoder, only: [:b]}
    defstruct [:a, :b]
  end
end
