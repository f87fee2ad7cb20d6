defmodule RustyJson.Reference do
  @moduledoc false
  # The independent JSON implementations tests compare RustyJson with, as available on the running VM:
  #
  #   * `:jiffy` (apt's erlang-jiffy) where installed: keeps the LAST of duplicate keys; lone surrogate escapes are
  #     rejected;
  #   * `:json`, OTP's own module (OTP 27+): keeps the FIRST of duplicate keys (as Jason and RustyJson do); lone
  #     surrogate escapes are rejected.
  #
  # Tests use every one available. With none, `names/0` raises: a test must never pass because nothing was
  # compared. Both modules are called through apply/3, so this file compiles without warnings where either is
  # missing.

  @type name :: :jiffy | :json

  @doc "The references available on this VM (at least one, or it raises)."
  @spec names() :: [name()]
  def names do
    # Looked up once: asking for a module that is missing (:json before OTP 27) searches the whole code path in
    # the code server, one caller at a time; properties ask thousands of times, and on a busy machine those
    # searches took one of them past ExUnit's 60 s.
    case :persistent_term.get({__MODULE__, :names}, nil) do
      nil ->
        names = find_names()
        :persistent_term.put({__MODULE__, :names}, names)
        names

      names ->
        names
    end
  end

  defp find_names do
    case Enum.filter([:jiffy, :json], &available?/1) do
      [] ->
        raise "no reference JSON implementation on this VM (OTP #{System.otp_release()}): install " <>
                "erlang-jiffy (`make test` does) or use OTP 27+ (its :json module)"

      names ->
        names
    end
  end

  @spec available?(name()) :: boolean()
  def available?(:jiffy), do: Code.ensure_loaded?(:jiffy)
  def available?(:json), do: Code.ensure_loaded?(:json) and function_exported?(:json, :decode, 3)

  @doc "Which of duplicate keys a reference keeps in a decoded map."
  @spec duplicate_keys(name()) :: :first | :last
  def duplicate_keys(:jiffy), do: :last
  def duplicate_keys(:json), do: :first

  @doc "Decodes with objects as maps and null as nil: `{:ok, term}`, or `:error` when the reference rejects it."
  @spec decode(name(), binary()) :: {:ok, term()} | :error
  def decode(:jiffy, bin),
    do: jiffy(fn -> apply(:jiffy, :decode, [bin, [:return_maps, :use_nil]]) end)

  def decode(:json, bin), do: json(bin, %{null: nil})

  @doc "Like `decode/2`, but objects are `{[{key, value}]}` in document order, duplicates kept (jiffy's EJSON)."
  @spec decode_ordered(name(), binary()) :: {:ok, term()} | :error
  def decode_ordered(:jiffy, bin), do: jiffy(fn -> apply(:jiffy, :decode, [bin, [:use_nil]]) end)

  def decode_ordered(:json, bin) do
    json(bin, %{
      null: nil,
      object_start: fn _ -> [] end,
      object_push: fn k, v, acc -> [{k, v} | acc] end,
      object_finish: fn acc, old -> {{Enum.reverse(acc)}, old} end
    })
  end

  @doc "`decode/2` that raises when the reference rejects the input."
  @spec decode!(name(), binary()) :: term()
  def decode!(name, bin) do
    case decode(name, bin) do
      {:ok, term} -> term
      :error -> raise ArgumentError, "#{name} rejected #{inspect(bin, limit: 20)}"
    end
  end

  @doc "Encodes a term of nil, booleans, numbers, binaries, lists and maps with binary keys, as a binary."
  @spec encode!(name(), term()) :: binary()
  def encode!(:jiffy, term), do: IO.iodata_to_binary(apply(:jiffy, :encode, [term, [:use_nil]]))

  def encode!(:json, term) do
    encoder = fn
      nil, _ -> "null"
      other, enc -> apply(:json, :encode_value, [other, enc])
    end

    IO.iodata_to_binary(apply(:json, :encode, [term, encoder]))
  end

  defp jiffy(fun) do
    {:ok, fun.()}
  catch
    _, _ -> :error
  end

  defp json(bin, decoders) do
    case apply(:json, :decode, [bin, :ok, decoders]) do
      {term, :ok, ""} -> {:ok, term}
      {_, :ok, _trailing} -> :error
    end
  catch
    _, _ -> :error
  end
end
