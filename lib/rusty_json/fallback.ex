defmodule RustyJson.Encoder.Fallback do
  @moduledoc false
  # A struct with no `RustyJson.Encoder` implementation is encoded with its `Jason.Encoder` implementation (Jason
  # loaded), else with its `JSON.Encoder` one (Elixir 1.18+). What they return is text RustyJson did not write
  # (Elixir's `JSON.Encoder` for a string ignores the encoder it is given; Jason knows no `sort_keys`), so with
  # `escape:` other than `:json`, `sort_keys: true` or `maps: :strict` the NIF writes it again
  # (`rustyjson_core::rewrite`): every string escaped in the call's mode, every object sorted, every object checked
  # for a repeated key. With none of them the text is used as it is: the default path pays nothing.

  alias RustyJson.{DecodeError, Encode, EncodeError, EncodeOptions, Native}
  require EncodeOptions

  # Texts larger than this are rewritten on a dirty scheduler (as `RustyJson.Formatter` does).
  @dirty_bytes 64 * 1024

  @doc false
  # `{:ok, iodata}` from the struct's `Jason.Encoder` or `JSON.Encoder` implementation; `:error` when it has
  # neither.
  @spec encode(struct(), term()) :: {:ok, iodata()} | :error
  def encode(struct, opts) do
    cond do
      jason_impl(struct) -> {:ok, jason_encode(struct, options(opts))}
      json_impl(struct) -> {:ok, json_encode(struct, options(opts))}
      true -> :error
    end
  end

  @doc false
  # The `Jason.Encoder` implementation of `struct` when Jason is loaded and has one (not its `Any` fallback).
  @spec jason_impl(struct()) :: module() | nil
  def jason_impl(struct) do
    if Code.ensure_loaded?(Jason.Encoder) do
      case apply(Jason.Encoder, :impl_for, [struct]) do
        nil -> nil
        Jason.Encoder.Any -> nil
        impl -> impl
      end
    end
  end

  @doc false
  # The `JSON.Encoder` implementation of `struct` (Elixir 1.18+; nil before, or when it has none). `apply/3`: the
  # module does not exist on older Elixir, where a direct call would be a compile warning.
  @spec json_impl(struct()) :: module() | nil
  def json_impl(struct) do
    if Code.ensure_loaded?(JSON.Encoder), do: apply(JSON.Encoder, :impl_for, [struct])
  end

  # Encoder options as the protocol receives them (a tuple), or as a caller of `RustyJson.Encoder.encode/2` may
  # pass them (a keyword list).
  defp options(opts) when is_tuple(opts), do: EncodeOptions.compact(opts)

  defp options(opts) when is_list(opts) or is_map(opts),
    do: opts |> EncodeOptions.new() |> EncodeOptions.compact()

  defp options(_opts), do: EncodeOptions.default()

  # Jason writes the struct with its defaults: escaping, order and the duplicate check are the rewrite's (one
  # escaping, not Jason's then RustyJson's, and a repeated key is RustyJson's error as anywhere else).
  defp jason_encode(%module{} = struct, opts) do
    struct |> jason_text() |> rewrite(opts, module, "Jason.Encoder")
  end

  # A `Jason.EncodeError` (invalid UTF-8 in a string Jason writes) becomes RustyJson's, with its message, so that
  # `RustyJson.encode/2` returns it rather than raise.
  defp jason_text(struct) do
    apply(Jason, :encode_to_iodata!, [struct])
  rescue
    e ->
      if is_struct(e, Jason.EncodeError),
        do: reraise(EncodeError, [message: Exception.message(e)], __STACKTRACE__),
        else: reraise(e, __STACKTRACE__)
  end

  # `JSON.Encoder.encode/2` with an encoder function that writes nested values with RustyJson and the call's
  # options (a derived `JSON.Encoder` hands each field to it); what the implementation writes itself (keys, its
  # own strings) is rewritten.
  defp json_encode(%module{} = struct, opts) do
    encoder = fn value, _encoder -> Encode.value(value, opts) end

    JSON.Encoder
    |> apply(:encode, [struct, encoder])
    |> rewrite(opts, module, "JSON.Encoder")
  end

  defp rewrite(iodata, opts, module, protocol) do
    if rewrite?(opts) do
      text = IO.iodata_to_binary(iodata)

      result =
        if byte_size(text) > @dirty_bytes,
          do: Native.rewrite_dirty(text, opts),
          else: Native.rewrite(text, opts)

      case result do
        json when is_binary(json) ->
          json

        {:error, {:duplicate_key, key}} ->
          raise EncodeError.new({:duplicate_key, key})

        {:error, {:invalid, position, token}} ->
          reason = Exception.message(%DecodeError{position: position, token: token, data: text})

          raise EncodeError,
            message:
              "the #{protocol} implementation of #{inspect(module)} returned invalid JSON: #{reason}"
      end
    else
      iodata
    end
  end

  defp rewrite?({escape, strict, _pretty}), do: escape != :json or strict
  defp rewrite?({escape, strict, _pretty, sort}), do: escape != :json or strict or sort
end
