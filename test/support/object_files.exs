defmodule RustyJson.ObjectFiles do
  @moduledoc false
  # Just enough of Mach-O (64-bit, little-endian) and PE32+ to inspect the NIF libraries cross-built for macOS and
  # Windows, which no VM here can load: the CPU, the kind of file, the libraries it needs, the symbols it exports
  # and, for Mach-O, where each undefined symbol is to be found. Raises on anything else.

  import Bitwise

  # Mach-O load commands read here; every LC_*_DYLIB command that names a library takes the next library ordinal.
  @lc_symtab 0x2
  @lc_id_dylib 0xD
  @lc_build_version 0x32
  @lc_rpath 0x8000001C
  @lc_code_signature 0x1D
  @dylib_loads [0xC, 0x20, 0x80000018, 0x8000001F, 0x80000023]

  @doc """
  The memory size of an ELF file's thread-local storage segment (`PT_TLS`), 0 without one: ELF32 or ELF64, either
  byte order (the libraries this VM loads on Linux).
  """
  def elf_tls_size(<<0x7F, "ELF", class, data, _::binary>> = file)
      when class in 1..2 and data in 1..2 do
    {word, half, endian} = {class * 32, 16, if(data == 1, do: :little, else: :big)}
    int = fn at, bits -> :binary.decode_unsigned(binary_part(file, at, div(bits, 8)), endian) end

    {phoff, phentsize, phnum} =
      if class == 2,
        do: {int.(0x20, word), int.(0x36, half), int.(0x38, half)},
        else: {int.(0x1C, word), int.(0x2A, half), int.(0x2C, half)}

    # p_memsz: after p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz (ELF64); after five 32-bit fields (ELF32).
    memsz_at = if class == 2, do: 40, else: 20

    Enum.find_value(0..(phnum - 1)//1, 0, fn i ->
      at = phoff + i * phentsize
      if int.(at, 32) == 7, do: int.(at + memsz_at, word)
    end)
  end

  def elf_tls_size(_), do: raise(ArgumentError, "not an ELF file")

  @doc """
  A Mach-O file's `%{cpu:, filetype:, flags:, dylibs:, id:, rpaths:, min_macos:, signature:, symbols:}`: cpu
  `:arm64`, `:x86_64` or the number; dylibs in ordinal order; signature nil (unsigned), `:valid` (every page's
  SHA-256 in the code directory matches the file) or `{:invalid, page}`; symbols `{name, kind, ordinal}` (external ones only), kind
  `:defined` or `:undefined`, ordinal the two-level library ordinal of an undefined one (1 = the first dylib,
  0xFE = looked up dynamically).
  """
  def macho(
        <<0xFEEDFACF::little-32, cpu::little-32, _sub::32, filetype::little-32, ncmds::little-32,
          _size::32, flags::little-32, _reserved::32, rest::binary>> = file
      ) do
    commands = load_commands(rest, ncmds, [])

    %{
      cpu: cpu_name(cpu),
      filetype: filetype,
      flags: flags,
      dylibs: for({cmd, body} <- commands, cmd in @dylib_loads, do: lc_string(body)),
      id: Enum.find_value(commands, fn {cmd, body} -> cmd == @lc_id_dylib && lc_string(body) end),
      rpaths: for({@lc_rpath, body} <- commands, do: lc_string(body)),
      min_macos: Enum.find_value(commands, &min_macos/1),
      signature: Enum.find_value(commands, &signature(&1, file)),
      symbols: Enum.find_value(commands, [], &symtab(&1, file))
    }
  end

  def macho(_), do: raise(ArgumentError, "not a 64-bit little-endian Mach-O file")

  defp cpu_name(0x0100000C), do: :arm64
  defp cpu_name(0x01000007), do: :x86_64
  defp cpu_name(other), do: other

  defp load_commands(_, 0, acc), do: Enum.reverse(acc)

  defp load_commands(<<cmd::little-32, size::little-32, rest::binary>>, n, acc) do
    body = binary_part(rest, 0, size - 8)

    load_commands(binary_part(rest, size - 8, byte_size(rest) - size + 8), n - 1, [
      {cmd, body} | acc
    ])
  end

  # A dylib or rpath command's string: its offset counts from the command's start (8 bytes before its body).
  defp lc_string(<<offset::little-32, _::binary>> = body) do
    body |> binary_part(offset - 8, byte_size(body) - offset + 8) |> c_string()
  end

  # LC_BUILD_VERSION's minos, X.Y.Z as xxxx.yy.zz nibbles, for platform 1 (macOS).
  defp min_macos({@lc_build_version, <<1::little-32, minos::little-32, _::binary>>}),
    do: {minos >>> 16, minos >>> 8 &&& 0xFF}

  defp min_macos(_), do: nil

  # The code signature's SuperBlob (big-endian): its CodeDirectory (slot type 0) holds a hash of each page of the
  # file up to codeLimit. A change after signing (a later strip, say) leaves a page whose hash differs.
  defp signature({@lc_code_signature, <<offset::little-32, _size::little-32>>}, file) do
    <<0xFADE0CC0::32, _length::32, count::32, index::binary-size(count * 8), _::binary>> =
      binary_part(file, offset, byte_size(file) - offset)

    [cd_offset] = for <<0::32, at::32 <- index>>, do: offset + at

    <<0xFADE0C02::32, _::binary-size(12), hash_offset::32, _ident::32, _special::32, slots::32,
      limit::32, hash_size, 2, _platform, page_log2,
      _::binary>> = binary_part(file, cd_offset, 44)

    page = 1 <<< page_log2

    Enum.find_value(0..(slots - 1), :valid, fn i ->
      bytes = binary_part(file, i * page, min(page, limit - i * page))
      expected = binary_part(file, cd_offset + hash_offset + i * hash_size, hash_size)
      if :crypto.hash(:sha256, bytes) != expected, do: {:invalid, i}
    end)
  end

  defp signature(_, _), do: nil

  # nlist_64 entries: n_strx, n_type, n_sect, n_desc (its high byte the library ordinal), n_value.
  defp symtab(
         {@lc_symtab,
          <<symoff::little-32, nsyms::little-32, stroff::little-32, strsize::little-32>>},
         file
       ) do
    strings = binary_part(file, stroff, strsize)

    for <<strx::little-32, type, _sect, desc::little-16,
          _value::64 <- binary_part(file, symoff, nsyms * 16)>>,
        # Not debugging entries (N_STAB), external (N_EXT) and not private-external (N_PEXT).
        (type &&& 0xE0) == 0 and (type &&& 0x11) == 0x01 do
      name = strings |> binary_part(strx, strsize - strx) |> c_string()

      case type &&& 0x0E do
        0x0 -> {name, :undefined, desc >>> 8}
        _ -> {name, :defined, nil}
      end
    end
  end

  defp symtab(_, _), do: nil

  @doc """
  A PE32+ file's `%{machine:, dll?:, timestamp:, exports:, imports:}`: machine `:amd64` or the number; imports the
  names of the DLLs it imports from, delay-loaded ones included.
  """
  def pe(<<"MZ", _::binary-size(58), pe_offset::little-32, _::binary>> = file) do
    <<"PE\0\0", machine::little-16, nsections::little-16, timestamp::little-32, _::64,
      optional_size::little-16, characteristics::little-16, optional::binary-size(optional_size),
      sections::binary-size(nsections * 40),
      _::binary>> = binary_part(file, pe_offset, byte_size(file) - pe_offset)

    # PE32+ (0x20B): the data directories (RVA, size) from byte 112, their count at 108.
    <<0x20B::little-16, _::binary-size(106), ndirs::little-32, dirs::binary>> = optional

    dirs =
      for <<rva::little-32, size::little-32 <- binary_part(dirs, 0, ndirs * 8)>>, do: {rva, size}

    sections =
      for <<_name::binary-size(8), vsize::little-32, va::little-32, raw_size::little-32,
            raw::little-32, _::binary-size(16) <- sections>>,
          do: {va, max(vsize, raw_size), raw}

    at = fn rva -> rva_offset(sections, rva) end

    %{
      machine: if(machine == 0x8664, do: :amd64, else: machine),
      dll?: (characteristics &&& 0x2000) != 0,
      timestamp: timestamp,
      exports: exports(file, Enum.at(dirs, 0), at),
      imports:
        imports(file, Enum.at(dirs, 1), 20, 12, at) ++ imports(file, Enum.at(dirs, 13), 32, 4, at)
    }
  end

  def pe(_), do: raise(ArgumentError, "not a PE file")

  defp rva_offset(sections, rva) do
    Enum.find_value(sections, fn {va, size, raw} ->
      rva >= va and rva < va + size and raw + rva - va
    end) ||
      raise ArgumentError, "RVA #{rva} is in no section"
  end

  defp exports(_file, {_, 0}, _at), do: []

  defp exports(file, {rva, _}, at) do
    <<_::binary-size(24), count::little-32, _functions::32, names::little-32, _::binary>> =
      binary_part(file, at.(rva), 40)

    for <<name::little-32 <- binary_part(file, at.(names), count * 4)>>,
      do: string_at(file, at.(name))
  end

  # Import descriptors (20 bytes, the DLL's name at 12) or delay-load ones (32 bytes, at 4), up to an all-zero one.
  defp imports(_file, nil, _size, _name_at, _at), do: []
  defp imports(_file, {_, 0}, _size, _name_at, _at), do: []

  defp imports(file, {rva, _}, size, name_at, at) do
    file
    |> binary_part(at.(rva), byte_size(file) - at.(rva))
    |> descriptors(size, [])
    |> Enum.map(fn descriptor ->
      <<name::little-32>> = binary_part(descriptor, name_at, 4)
      string_at(file, at.(name))
    end)
  end

  defp descriptors(bytes, size, acc) do
    descriptor = binary_part(bytes, 0, size)
    rest = binary_part(bytes, size, byte_size(bytes) - size)

    if descriptor == <<0::size(size * 8)>>,
      do: Enum.reverse(acc),
      else: descriptors(rest, size, [descriptor | acc])
  end

  defp string_at(file, offset),
    do: file |> binary_part(offset, byte_size(file) - offset) |> c_string()

  defp c_string(bytes), do: bytes |> :binary.split(<<0>>) |> hd()
end
