# Jason cannot be installed here (no Hex), so the tests of the `Jason.Encoder` fallback run against this stand-in:
# the protocol, `Jason.encode_to_iodata!/1` calling it on a struct, and `Jason.EncodeError`, as Jason has them.
# Where the real Jason is loaded this file defines nothing, and the tests' structs work with either: their
# implementations write their text themselves (as hand-written implementations may), with no help from `Jason.Encode`.
unless Code.ensure_loaded?(Jason) do
  defprotocol Jason.Encoder do
    @moduledoc false
    @spec encode(t(), term()) :: iodata()
    def encode(value, opts)
  end

  defmodule Jason.EncodeError do
    @moduledoc false
    defexception [:message]
  end

  defmodule Jason do
    @moduledoc false
    # Only what RustyJson's fallback calls; a struct is the only value it is handed.
    @spec encode_to_iodata!(struct(), keyword()) :: iodata()
    def encode_to_iodata!(%_{} = struct, opts \\ []), do: Jason.Encoder.encode(struct, opts)
  end
end

defmodule RustyJson.Test.JasonRaw do
  @moduledoc false
  defstruct [:text]

  defimpl Jason.Encoder do
    # Strings written raw, as JSON without escapes beyond `"`, `\` and control bytes; objects in the order written.
    def encode(%{text: text}, _opts) do
      s = RustyJson.Test.JasonRaw.raw(text)
      [~s({"zed":), s, ~s(,"alpha":{"y":[{"d":1,"c":2}],"x":), s, "},", s, ":0}"]
    end
  end

  @doc false
  # `text` as a JSON string that only escapes what JSON requires.
  def raw(text) do
    escaped =
      for <<c::utf8 <- text>>, into: "" do
        case c do
          ?" -> ~S(\")
          ?\\ -> ~S(\\)
          c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
          c -> <<c::utf8>>
        end
      end

    [?", escaped, ?"]
  end
end

defmodule RustyJson.Test.JasonText do
  @moduledoc false
  # Writes `text` as its JSON, whatever it is.
  defstruct [:text]

  defimpl Jason.Encoder do
    def encode(%{text: text}, _opts), do: text
  end
end

defmodule RustyJson.Test.JasonFails do
  @moduledoc false
  defstruct [:message]

  defimpl Jason.Encoder do
    def encode(%{message: message}, _opts), do: raise(Jason.EncodeError, message: message)
  end
end
