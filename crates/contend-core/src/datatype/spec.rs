//! MPI derived datatypes as a user writes them (YAML or JSON), constructor by constructor as
//! MPI defines them (MPI 4.0, §5.1). Counts and element strides are plain integers, as in MPI;
//! byte displacements carry their unit in the field name (`stride_bytes`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A datatype: a basic type or a constructor over other datatypes (nestable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TypeSpec {
    /// 1 byte (MPI_BYTE, MPI_CHAR).
    Byte,
    /// 2 bytes.
    Half,
    /// 4 bytes (MPI_INT).
    Int,
    /// 4 bytes (MPI_FLOAT).
    Float,
    /// 8 bytes (MPI_DOUBLE).
    Double,
    /// 8 bytes (MPI_INT64_T).
    Int64,
    /// 16 bytes (MPI_C_DOUBLE_COMPLEX).
    DoubleComplex,
    /// `count` copies of `of`, one after the other (MPI_Type_contiguous).
    Contiguous { count: u64, of: Box<TypeSpec> },
    /// `count` blocks of `blocklength` copies, block starts `stride` extents of `of` apart
    /// (MPI_Type_vector).
    Vector { count: u64, blocklength: u64, stride: i64, of: Box<TypeSpec> },
    /// As vector, with the stride in bytes (MPI_Type_create_hvector).
    Hvector { count: u64, blocklength: u64, stride_bytes: i64, of: Box<TypeSpec> },
    /// Blocks of their own lengths at displacements in extents of `of` (MPI_Type_indexed).
    Indexed { blocklengths: Vec<u64>, displacements: Vec<i64>, of: Box<TypeSpec> },
    /// Blocks of one length at displacements in extents of `of` (MPI_Type_create_indexed_block).
    IndexedBlock { blocklength: u64, displacements: Vec<i64>, of: Box<TypeSpec> },
    /// A sub-block of an n-dimensional array (MPI_Type_create_subarray); its extent is the
    /// whole array's.
    Subarray {
        sizes: Vec<u64>,
        subsizes: Vec<u64>,
        starts: Vec<u64>,
        /// c (last dimension fastest, the default) or fortran (first dimension fastest).
        #[serde(default)]
        order: Order,
        of: Box<TypeSpec>,
    },
    /// Blocks of different types at byte displacements (MPI_Type_create_struct); no
    /// alignment padding is added to the extent.
    Struct { blocklengths: Vec<u64>, displacements_bytes: Vec<i64>, types: Vec<TypeSpec> },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    #[default]
    C,
    Fortran,
}

/// A datatype file: a name and the type (`contend schema datatype`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatatypeSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Written as MPI nests constructors: `{vector: {count: 4, blocklength: 1, stride: 8, of: double}}`.
    #[serde(rename = "type", with = "serde_yaml::with::singleton_map_recursive")]
    #[schemars(with = "TypeSpec")]
    pub ty: TypeSpec,
}

impl TypeSpec {
    /// Bytes of a basic type, None for a constructor.
    pub fn basic_size(&self) -> Option<u64> {
        Some(match self {
            TypeSpec::Byte => 1,
            TypeSpec::Half => 2,
            TypeSpec::Int | TypeSpec::Float => 4,
            TypeSpec::Double | TypeSpec::Int64 => 8,
            TypeSpec::DoubleComplex => 16,
            _ => return None,
        })
    }

    /// The constructor's name as written in files, for error paths.
    pub fn key(&self) -> &'static str {
        match self {
            TypeSpec::Contiguous { .. } => "contiguous",
            TypeSpec::Vector { .. } => "vector",
            TypeSpec::Hvector { .. } => "hvector",
            TypeSpec::Indexed { .. } => "indexed",
            TypeSpec::IndexedBlock { .. } => "indexed_block",
            TypeSpec::Subarray { .. } => "subarray",
            TypeSpec::Struct { .. } => "struct",
            _ => "basic",
        }
    }
}
